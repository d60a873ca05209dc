// kube-dns in the agent's Service map (and in kube-proxy's rules where it runs), matching its EndpointSlice: every property of this topic, in every mode the run has (./kube-dns.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./kube-dns.topic.ts";

describeTopic(topic);
