// When an agent loses the API server: every property of this topic, in every mode the run has (./lifecycle-control.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./lifecycle-control.topic.ts";

describeTopic(topic);
