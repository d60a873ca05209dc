// An externalIP from our range, reached from a Pod and a node: who translates it, and where socket LB will not: every property of this topic, in every mode the run has (./external-ip.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./external-ip.topic.ts";

describeTopic(topic);
