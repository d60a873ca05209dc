// One topic, both modes: observe, record, judge every declared property of "report" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("report");
