// Issue 6 measurements: rule and map growth with the number of Services (see helpers/observe/measure.ts).
import { topicSpec } from "./harness.ts";

topicSpec("measure-scale");
