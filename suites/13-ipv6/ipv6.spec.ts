// The IPv6 family of a dual-stack cluster: web's IPv6 ClusterIP and NodePort, a held connection and a Service without backends: every property of this topic, in every mode the run has (./ipv6.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./ipv6.topic.ts";

describeTopic(topic);
