// One topic, both modes: observe, record, judge every declared property of "host-routing" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("host-routing");
