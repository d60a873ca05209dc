// Where kube-proxy's rules are: none without kube-proxy, a chain per Service with it; Cilium's and kubelet's chains in both modes: every property of this topic, in every mode the run has (./iptables.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./iptables.topic.ts";

describeTopic(topic);
