// A Pod's hostPort and a host-network backend: who serves the hostPort, and how a Service reaches a backend at a node's address: every property of this topic, in every mode the run has (./host-network.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./host-network.topic.ts";

describeTopic(topic);
