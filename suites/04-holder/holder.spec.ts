// A long-lived connection to web's ClusterIP: who translated it (the socket hook, or the packet path) and what each side sees: every property of this topic, in every mode the run has (./holder.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./holder.topic.ts";

describeTopic(topic);
