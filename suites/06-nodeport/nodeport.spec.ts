// NodePort 30780: who answers it (the agent's BPF or kube-proxy's rules), from a node and from outside: every property of this topic, in every mode the run has (./nodeport.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./nodeport.topic.ts";

describeTopic(topic);
