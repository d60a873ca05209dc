// The holder's endpoint: which BPF program is attached to its device, how, and its policy map: every property of this topic, in every mode the run has (./program.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./program.topic.ts";

describeTopic(topic);
