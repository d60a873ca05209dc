// A Service without backends: refused at once (and by whom), or a timeout under the opt-in drop profile: every property of this topic, in every mode the run has (./ghost.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./ghost.topic.ts";

describeTopic(topic);
