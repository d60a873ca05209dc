// When a Pod is replaced: every property of this topic, in every mode the run has (./lifecycle.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./lifecycle.topic.ts";

describeTopic(topic);
