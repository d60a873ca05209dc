// One topic, both modes: observe, record, judge every declared property of "ghost" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("ghost");
