// A Cilium upgrade under load: the holder's connection survives with the same backend: every property of this topic, in every mode the run has (./upgrade.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./upgrade.topic.ts";

describeTopic(topic);
