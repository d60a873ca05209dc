// The agent's Service map: web's ClusterIP frontend and its two backends, in both modes: every property of this topic, in every mode the run has (./service-map.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./service-map.topic.ts";

describeTopic(topic);
