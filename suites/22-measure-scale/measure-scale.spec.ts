// How the datapath grows with the number of Services: kube-proxy's rules and the BPF LB entries at 1, 50 and 200 Services: every property of this topic, in every mode the run has (./measure-scale.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./measure-scale.topic.ts";

describeTopic(topic);
