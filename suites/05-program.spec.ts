// One topic, both modes: observe, record, judge every declared property of "program" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("program");
