// When every agent restarts while backends are replaced: every property of this topic, in every mode the run has (./lifecycle-agents.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./lifecycle-agents.topic.ts";

describeTopic(topic);
