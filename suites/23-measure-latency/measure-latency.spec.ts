// How fast the datapath follows: endpoint changes into every agent's map, and how soon a Service without backends fails: every property of this topic, in every mode the run has (./measure-latency.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./measure-latency.topic.ts";

describeTopic(topic);
