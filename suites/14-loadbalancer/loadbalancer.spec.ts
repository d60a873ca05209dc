// LoadBalancer addresses (Cilium's LB-IPAM, ipMode VIP and Proxy) and an externalIP, reached from Pods and nodes: every property of this topic, in every mode the run has (./loadbalancer.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./loadbalancer.topic.ts";

describeTopic(topic);
