// externalTrafficPolicy Local and Cluster, internalTrafficPolicy Local: a node without a backend, the health-check port, the client's address: every property of this topic, in every mode the run has (./traffic-policy.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./traffic-policy.topic.ts";

describeTopic(topic);
