// One topic, both modes: observe, record, judge every declared property of "iptables" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("iptables");
