// What must hold after every topic: no unexpected drop reasons, no unexpected error lines in the agents' logs: every property of this topic, in every mode the run has (./invariants.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./invariants.topic.ts";

describeTopic(topic);
