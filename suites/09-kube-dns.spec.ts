// One topic, both modes: observe, record, judge every declared property of "kube-dns" (see helpers/properties).
import { topicSpec } from "./harness.ts";

topicSpec("kube-dns");
