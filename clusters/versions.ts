import { UserError } from "../helpers/errors.ts";
import {
  declaredCilium,
  minorOf,
  parseEnvFile,
  unsupportedVersion,
  VERSIONS_FILE,
  versionRefusal,
  versionStanding,
  versionValue,
} from "../helpers/properties/versions.ts";

/**
 * The one source of truth for versions: clusters/lab/versions.env (read only by helpers/properties/versions.ts,
 * which the judge needs too; the constants below are read through it when this module is imported). It names the Cilium patches the suite has run (every recorded bundle used one of them),
 * the Kubernetes version the lab builds, kind, helm and the node image a registry run uses; the lab script, the
 * registry path, `--version`, the workflow and the README read it.
 */
export { parseEnvFile, VERSIONS_FILE };
const need = versionValue;

/** The Cilium patches the suite has run, newest first (the lab builds these without being asked). */
export const RUN_CILIUM_VERSIONS: readonly string[] = declaredCilium();
if (RUN_CILIUM_VERSIONS.length === 0) throw new Error("clusters/lab/versions.env has no CILIUM_VERSIONS");
/** Per declared minor, the patch a run installs when given the minor: the one the suite has run. */
export const CILIUM_PATCHES: Record<string, string> = Object.fromEntries(
  RUN_CILIUM_VERSIONS.map((v) => [minorOf(v), v]),
);
/** The declared minors, oldest first. */
export const CILIUM_MINORS = Object.keys(CILIUM_PATCHES).sort(
  (a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]),
);
export const DEFAULT_CILIUM_MINOR = minorOf(RUN_CILIUM_VERSIONS[0] as string);
const NEWEST_MINOR = CILIUM_MINORS.at(-1) as string;
/** The Kubernetes version every recorded run used (the lab builds it). */
export const KUBERNETES_VERSION = need("K8S_VERSION");

/**
 * What a version the suite has never run means, in one line each (said at the start of a run, in its plan and
 * kept in its bundle): another patch of a declared minor gets that minor's expectations; a patch of a newer
 * minor gets the newest declared minor's, every verdict marked so; a Kubernetes other than the one every
 * recorded run used is said too. Empty when the suite has run exactly these.
 */
export function neverRunHere(cilium: string, kubernetes?: string): string[] {
  const out: string[] = [];
  const s = versionStanding(cilium);
  if (s.kind === "newer")
    out.push(
      `never run here: Cilium ${cilium}, a minor the suite has not declared (newest declared: ${s.from}); every expectation is assumed from ${s.from} (as of ${s.as}) and each verdict says so; a property that does not hold is "changed in the new minor", to be declared`,
    );
  else if (!RUN_CILIUM_VERSIONS.includes(cilium))
    out.push(
      `never run here: Cilium ${cilium}; the expectations of ${minorOf(cilium)} apply (the suite has run ${RUN_CILIUM_VERSIONS.join(", ")})`,
    );
  if (kubernetes && kubernetes.split("@")[0] !== KUBERNETES_VERSION)
    out.push(
      `never run here: Kubernetes ${kubernetes.split("@")[0]}; every recorded run used ${KUBERNETES_VERSION}`,
    );
  return out;
}

export interface CiliumVersion {
  version: string;
  minor: string;
  /** Set for a minor newer than every declared one: the declared minor whose expectations are assumed. */
  assumedFrom?: string;
}

/** Why a Cilium version is refused, in one line (helpers/properties/versions.ts); null when it runs. */
export const ciliumRefusal = (version: string): string | null => versionRefusal(version);

/**
 * The refusal for a version a cluster runs (the existing provider reads it from the agents), or nothing: an
 * older minor or another major; a version string it cannot read is said by neverRunHere, not refused.
 */
export function assertRunnableCilium(version: string): void {
  const why = versionStanding(version).kind === "invalid" ? null : ciliumRefusal(version);
  if (why) throw new UserError(why);
}

/**
 * `1.20` → its pinned patch; `1.19.6` (or `1.21.0-rc.1`) → as given: a patch of a declared minor, or of a minor
 * newer than every declared one (its expectations assumed from the newest declared minor); a bare undeclared
 * minor has no pinned patch, so it is refused asking for one; an older minor is refused saying why.
 */
export function resolveCilium(spec: string | undefined): CiliumVersion {
  const s = (spec ?? DEFAULT_CILIUM_MINOR).trim().replace(/^v/, "");
  const m = /^(\d+\.\d+)(?:\.(\d+)(-[0-9A-Za-z][0-9A-Za-z.-]*)?)?$/.exec(s);
  const minor = m?.[1];
  if (!m || !minor) throw new UserError(unsupportedVersion(spec));
  const refused = ciliumRefusal(s);
  if (refused) throw new UserError(refused);
  const standing = versionStanding(s);
  if (m[2] === undefined) {
    const pinned = CILIUM_PATCHES[minor];
    if (!pinned)
      throw new UserError(
        `Cilium ${minor} is a minor the suite has not declared, so it pins no patch of it: name one (e.g. ${minor}.0; a release candidate as ${minor}.0-rc.1), and its expectations are assumed from ${NEWEST_MINOR}`,
      );
    return { version: pinned, minor };
  }
  return { version: s, minor, ...(standing.kind === "newer" ? { assumedFrom: standing.from } : {}) };
}

/** kind and the node image a registry run uses (clusters/lab/versions.env). */
export const KIND = {
  version: need("KIND_VERSION"),
  nodeImage: need("KIND_NODE_IMAGE"),
  /** The Kubernetes version of that image (its tag). */
  nodeKubernetes: (/:(v[\d.]+)/.exec(need("KIND_NODE_IMAGE"))?.[1] ?? "unknown") as string,
} as const;

/** k3d and the k3s image it runs (k3d's version/version.go). */
export const K3D = {
  version: "v5.9.0",
  image: "rancher/k3s:v1.35.5-k3s1",
} as const;

export const CILIUM_CHART = "oci://quay.io/cilium/charts/cilium";
