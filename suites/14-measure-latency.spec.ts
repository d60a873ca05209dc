// Issue 6 measurements: convergence and fail-fast latencies (see helpers/observe/measure.ts).
import { topicSpec } from "./harness.ts";

topicSpec("measure-latency");
