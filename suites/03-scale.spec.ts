// One topic, both modes: observe, record, judge every declared property of "scale" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("scale");
