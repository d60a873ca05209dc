// Scaling web 2 → 4: the BPF map follows the EndpointSlice, and kube-proxy adds a KUBE-SEP chain per endpoint only where it runs: every property of this topic, in every mode the run has (./scale.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./scale.topic.ts";

describeTopic(topic);
