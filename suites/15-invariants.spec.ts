// One topic, both modes: observe, record, judge every declared property of "invariants" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("invariants");
