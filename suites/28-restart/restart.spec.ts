// The agents restarted on one version under load: what a restart alone costs, before the version changes: every property of this topic, in every mode the run has (./restart.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./restart.topic.ts";

describeTopic(topic);
