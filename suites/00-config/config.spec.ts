// The live datapath configuration, read from the agent and kube-proxy before any other topic: every property of this topic, in every mode the run has (./config.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./config.topic.ts";

describeTopic(topic);
