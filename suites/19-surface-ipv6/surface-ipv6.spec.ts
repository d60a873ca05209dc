// The Service surface's IPv6 family: an IPv6 LoadBalancer address, externalTrafficPolicy Local, an externalIP, ClientIP affinity and a hostPort, on a dual-stack cluster: every property of this topic, in every mode the run has (./surface-ipv6.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./surface-ipv6.topic.ts";

describeTopic(topic);
