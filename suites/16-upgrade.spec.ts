// The upgrade leg (UPGRADE_TO): the holder connection across a Cilium minor upgrade (see helpers/observe/upgrade.ts).
import { topicSpec } from "./harness.ts";

topicSpec("upgrade");
