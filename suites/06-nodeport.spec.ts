// One topic, both modes: observe, record, judge every declared property of "nodeport" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("nodeport");
