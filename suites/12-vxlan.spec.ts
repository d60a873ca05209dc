// One topic, both modes: observe, record, judge every declared property of "vxlan" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("vxlan");
