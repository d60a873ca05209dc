// Who translates a DNS query to kube-dns: kube-proxy's counters move for the host's queries, not for the Pod's: every property of this topic, in every mode the run has (./translation.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./translation.topic.ts";

describeTopic(topic);
