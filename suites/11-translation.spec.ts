// One topic, both modes: observe, record, judge every declared property of "translation" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("translation");
