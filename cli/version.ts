import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CILIUM_MINORS, CILIUM_PATCHES, DEFAULT_CILIUM_MINOR } from "../clusters/versions.ts";
import { versionsEnv } from "../helpers/properties/versions.ts";

const ROOT = join(import.meta.dirname, "..");

/** `--version`: the suite's version and the Cilium versions it declares (clusters/versions.ts) and the lab builds. */
export function versionText(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };
  const lab = versionsEnv();
  const patches = CILIUM_MINORS.map((m) => `${m} → ${CILIUM_PATCHES[m]}`).join(", ");
  return [
    `datapath-conformance ${pkg.version} (${pkg.name})`,
    `Cilium: minors ${CILIUM_MINORS.join(", ")} (CILIUM_VERSION=X.Y installs the pinned patch: ${patches}; default ${DEFAULT_CILIUM_MINOR}; CILIUM_VERSION=X.Y.Z any patch of these minors, or of a newer minor: its expectations assumed from ${CILIUM_MINORS.at(-1)}, each verdict marked so; an older minor is refused)`,
    `offline lab (LAB_IMAGES=1): builds Cilium ${(lab.CILIUM_VERSIONS ?? "").split(/\s+/).filter(Boolean).join(", ")} with Kubernetes ${lab.K8S_VERSION ?? "?"} (clusters/lab/versions.env), and any other Cilium patch \`lab run --cilium X.Y.Z\` names`,
    "",
  ].join("\n");
}
