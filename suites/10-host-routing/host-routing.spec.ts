// A node's own view: the ClusterIP is on no interface and in no route, and a remote Pod is reached through the tunnel: every property of this topic, in every mode the run has (./host-routing.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./host-routing.topic.ts";

describeTopic(topic);
