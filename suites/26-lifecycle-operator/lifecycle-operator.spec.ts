// When cilium-operator restarts under the Services: every property of this topic, in every mode the run has (./lifecycle-operator.topic.ts).
import { describeTopic } from "../harness.ts";
import { topic } from "./lifecycle-operator.topic.ts";

describeTopic(topic);
