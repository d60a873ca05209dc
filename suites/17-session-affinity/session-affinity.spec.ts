// sessionAffinity ClientIP: every new connection from one client to the same backend, and where that is kept: every property of this topic, in every mode the run has (./session-affinity.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./session-affinity.topic.ts";

describeTopic(topic);
