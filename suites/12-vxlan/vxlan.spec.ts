// On the wire: the tunnel carries the query to the backend Pod's address, never to the ClusterIP: every property of this topic, in every mode the run has (./vxlan.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./vxlan.topic.ts";

describeTopic(topic);
