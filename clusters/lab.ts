/**
 * The offline lab as an image source for the kind provider (LAB_IMAGES=1): a node image, Kubernetes component
 * images, Cilium agent/operator images and the workload images, all built on this machine by
 * clusters/lab/lab.sh from Go modules and Debian packages into a cache folder outside the repository.
 *
 * Nothing here applies without LAB_IMAGES=1: what a user with a registry gets does not change.
 */
import { existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { labCacheDir } from "../helpers/exec/portable.ts";
import { versionValue } from "../helpers/properties/versions.ts";
import { type CiliumVersion, parseEnvFile, resolveCilium } from "./versions.ts";

export const LAB_DIR = join(import.meta.dirname, "lab");
export const LAB_SCRIPT = join(LAB_DIR, "lab.sh");

/** KEY=VALUE lines of clusters/lab/versions.env (comments and blank lines skipped; quotes stripped). */
export { parseEnvFile };

export interface Lab {
  cache: string;
  /** kind, helm and kubectl as the lab built them. */
  binDir: string;
  kubernetes: string;
  nodeImage: string;
  agnhostImage: string;
  toolsImage: string;
  /**
   * Cilium versions the lab builds without being asked, newest first (versions.env); any other version is built
   * when a run names it (`lab run --cilium 1.19.8`).
   */
  ciliumVersions: string[];
}

export function labEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LAB_IMAGES === "1";
}

export function readLab(env: NodeJS.ProcessEnv = process.env): Lab {
  const need = versionValue;
  const cache = labCacheDir(env);
  return {
    cache,
    binDir: join(cache, "bin"),
    kubernetes: need("K8S_VERSION"),
    nodeImage: need("LAB_NODE_IMAGE"),
    agnhostImage: need("LAB_AGNHOST_IMAGE"),
    toolsImage: need("LAB_TOOLS_IMAGE"),
    ciliumVersions: need("CILIUM_VERSIONS").split(/\s+/).filter(Boolean),
  };
}

/** What a profile needs of the lab for one Cilium version. */
export interface LabProfile {
  nodeImage: string;
  ciliumImage: string;
  operatorImage: string;
  /** The chart from the Cilium module the images were built from (no OCI registry here). */
  chart: string;
  /**
   * Images `kind load docker-image` puts on every node before the install: none when the node image already
   * holds them (lab.sh imports every Cilium build into it; $LAB_CACHE/out/node-images.txt lists what it holds).
   */
  load: string[];
  /**
   * Every change the lab made to the Cilium build, as its images' label reads (the dependency replaces of
   * clusters/lab/cilium-deps.tsv, then clusters/lab/patch-cilium.sh's line), once the build has run.
   */
  patch: string | null;
  /** The dependency replaces cilium-deps.tsv declares for this version (known before the build runs). */
  deps: CiliumDep[];
  /** Whether versions.env names the version (built without being asked); else the run asked for it. */
  declared: boolean;
  /**
   * Where lab.sh unpacked the node image's images once, for every node to mount (`kindConfig`); null for a node
   * image built before that layout, whose nodes hold their images themselves.
   */
  store: string | null;
}

/** One line of clusters/lab/cilium-deps.tsv: a module version the proxy refuses, and what the lab builds with. */
export interface CiliumDep {
  version: string;
  module: string;
  /** module@version as the Cilium version's go.mod selects it (its own replace included). */
  pinned: string;
  /** module@version the lab builds with instead. */
  replacement: string;
  why: string;
}

/** clusters/lab/cilium-deps.tsv: tab-separated, `#` comments. */
export function parseCiliumDeps(text: string): CiliumDep[] {
  return text
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"))
    .map((l, i) => {
      const [version, module, pinned, replacement, why] = l.split("\t");
      if (!version || !module || !pinned || !replacement || !why)
        throw new Error(`clusters/lab/cilium-deps.tsv: line ${i + 1} needs 5 tab-separated fields: ${l}`);
      return { version, module, pinned, replacement, why };
    });
}

export function ciliumDeps(version: string): CiliumDep[] {
  return parseCiliumDeps(readFileSync(join(LAB_DIR, "cilium-deps.tsv"), "utf8")).filter(
    (d) => d.version === version,
  );
}

/** The label line lab.sh writes for a dependency change (apply_cilium_deps). */
export const depLabel = (d: CiliumDep): string => `replace ${d.module}: ${d.pinned} => ${d.replacement}`;

export function labCiliumImage(version: string): string {
  return `localhost/lab/cilium:v${version}-src`;
}

export function labOperatorImage(version: string): string {
  return `localhost/lab/operator-generic:v${version}-src`;
}

/** The images the lab's node image holds (written by lab.sh when it builds it). */
export function nodeImages(lab: Lab): string[] {
  const file = join(lab.cache, "out", "node-images.txt");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** The directory the node image's images are unpacked in (lab.sh image_node), once that layout is built. */
export function nodeStore(lab: Lab): string | null {
  const store = join(lab.cache, "out", "node-store");
  return existsSync(join(store, "root")) ? store : null;
}

/** The lab's build of a minor: the version versions.env names for it. */
function labVersionFor(lab: Lab, minor: string): string | undefined {
  return lab.ciliumVersions.find((v) => v.startsWith(`${minor}.`));
}

/**
 * CILIUM_VERSION or UPGRADE_TO as the lab resolves it: a full patch as given (any the lab can build: the
 * version is a parameter), a minor (or nothing: the newest) as the lab's build of that minor.
 */
export function labCilium(lab: Lab, spec: string | undefined): CiliumVersion {
  const asked = resolveCilium(spec ?? lab.ciliumVersions[0]);
  if (/^v?\d+\.\d+\.\d+$/.test(spec ?? "")) return asked;
  return { version: labVersionFor(lab, asked.minor) ?? asked.version, minor: asked.minor };
}

/** The lab's images of a Cilium version: any version (one versions.env does not name is built when asked for). */
export function labProfile(lab: Lab, ciliumVersion: string): LabProfile {
  const out = join(lab.cache, "out", `cilium-${ciliumVersion}`);
  const patchFile = join(lab.cache, "out", `cilium-${ciliumVersion}.patch.txt`);
  const ciliumImage = labCiliumImage(ciliumVersion);
  const operatorImage = labOperatorImage(ciliumVersion);
  const inNode = nodeImages(lab);
  return {
    nodeImage: lab.nodeImage,
    ciliumImage,
    operatorImage,
    chart: join(out, "chart"),
    load: [ciliumImage, operatorImage].filter((i) => !inNode.includes(i)),
    patch: existsSync(patchFile) ? readFileSync(patchFile, "utf8").trim().split("\n").join("; ") : null,
    deps: ciliumDeps(ciliumVersion),
    declared: lab.ciliumVersions.includes(ciliumVersion),
    store: nodeStore(lab),
  };
}

/** The agent's and clean-state init container's capability lists without SYS_RESOURCE (not in this kernel's bounding set). */
const AGENT_CAPS = [
  "CHOWN",
  "KILL",
  "NET_ADMIN",
  "NET_RAW",
  "IPC_LOCK",
  "SYS_MODULE",
  "SYS_ADMIN",
  "DAC_OVERRIDE",
  "FOWNER",
  "SETGID",
  "SETUID",
  "SYSLOG",
];
const CLEAN_STATE_CAPS = ["NET_ADMIN", "SYS_MODULE", "SYS_ADMIN"];

/** The Helm values this machine needs on top of the profile's (merged last). */
export function labHelmValues(lp: LabProfile): Record<string, unknown> {
  return {
    image: { override: lp.ciliumImage, pullPolicy: "Never", useDigest: false },
    operator: { image: { override: lp.operatorImage, pullPolicy: "Never", useDigest: false } },
    securityContext: { capabilities: { ciliumAgent: AGENT_CAPS, cleanCiliumState: CLEAN_STATE_CAPS } },
    // no Envoy image is built: no L7 proxy; Hubble relay and UI stay off (the chart default)
    l7Proxy: false,
    envoy: { enabled: false },
    hubble: { relay: { enabled: false }, ui: { enabled: false } },
    // three agents compile the datapath at once on two cores
    startupProbe: { failureThreshold: 600, periodSeconds: 2 },
  };
}

/** kind on a cgroup v1 host: kubelet ≥ 1.35 refuses cgroup v1 unless told otherwise. */
export const LAB_KUBEADM_PATCHES = ["kind: KubeletConfiguration\nfailCgroupV1: false\n"];

/** PATH with the lab's bin directory first (kind, helm, kubectl as the lab built them). */
export function labPath(lab: Lab, path = process.env.PATH ?? ""): string {
  return [lab.binDir, ...path.split(delimiter).filter((d) => d && d !== lab.binDir)].join(delimiter);
}
