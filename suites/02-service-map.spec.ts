// One topic, both modes: observe, record, judge every declared property of "service-map" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("service-map");
