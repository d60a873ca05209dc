// When ports and endpoints are reused: every property of this topic, in every mode the run has (./lifecycle-ports.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./lifecycle-ports.topic.ts";

describeTopic(topic);
