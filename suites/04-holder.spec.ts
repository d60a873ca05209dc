// One topic, both modes: observe, record, judge every declared property of "holder" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("holder");
