// report.txt: the lab's summary, re-read from the cluster at the end and compared with the earlier topics' records: every property of this topic, in every mode the run has (./report.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./report.topic.ts";

describeTopic(topic);
