import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../helpers/errors.ts";

/** `KEY=value` lines (a shell-sourced file: clusters/lab/versions.env). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m?.[1]) continue;
    out[m[1]] = (m[2] ?? "").trim().replace(/^"(.*)"$/, "$1");
  }
  return out;
}

/**
 * The one source of truth for versions: clusters/lab/versions.env. It names the Cilium patches the suite has
 * run (every recorded bundle used one of them), the Kubernetes version the lab builds, kind, helm and the node
 * image a registry run uses; the lab script, the registry path, `--version`, the workflow and the README read it.
 */
export const VERSIONS_FILE = join(import.meta.dirname, "lab", "versions.env");
const ENV = parseEnvFile(readFileSync(VERSIONS_FILE, "utf8"));
const need = (k: string): string => {
  const v = ENV[k];
  if (!v) throw new Error(`clusters/lab/versions.env has no ${k}`);
  return v;
};
const minorOf = (v: string) => v.split(".").slice(0, 2).join(".");

/** The Cilium patches the suite has run, newest first (the lab builds these). */
export const RUN_CILIUM_VERSIONS = need("CILIUM_VERSIONS").split(/\s+/).filter(Boolean);
/** Per supported minor, the patch a run installs when given the minor: the one the suite has run. */
export const CILIUM_PATCHES: Record<string, string> = Object.fromEntries(
  RUN_CILIUM_VERSIONS.map((v) => [minorOf(v), v]),
);
/** The supported minors, oldest first. */
export const CILIUM_MINORS = Object.keys(CILIUM_PATCHES).sort(
  (a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]),
);
export const DEFAULT_CILIUM_MINOR = minorOf(RUN_CILIUM_VERSIONS[0] as string);
/** The Kubernetes version every recorded run used (the lab builds it). */
export const KUBERNETES_VERSION = need("K8S_VERSION");

/**
 * What a version the suite has never run means, in one line each (said at the start of a run and kept in its
 * bundle): another patch of a supported minor gets that minor's expectations; a Kubernetes other than the one
 * every recorded run used is said too. Empty when the suite has run exactly these.
 */
export function neverRunHere(cilium: string, kubernetes?: string): string[] {
  const out: string[] = [];
  if (!RUN_CILIUM_VERSIONS.includes(cilium))
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
}

/** `1.20` → the pinned patch; `1.19.6` → as given (its minor must be supported). */
export function resolveCilium(spec: string | undefined): CiliumVersion {
  const s = (spec ?? DEFAULT_CILIUM_MINOR).replace(/^v/, "");
  const m = /^(1\.\d+)(?:\.(\d+))?$/.exec(s);
  const minor = m?.[1];
  if (!m || !minor || !CILIUM_PATCHES[minor]) {
    throw new UserError(
      `unsupported Cilium version ${JSON.stringify(spec)}; valid: ${CILIUM_MINORS.join(", ")} (or a patch of one, e.g. ${CILIUM_PATCHES[DEFAULT_CILIUM_MINOR]})`,
    );
  }
  return { version: m[2] !== undefined ? s : (CILIUM_PATCHES[minor] as string), minor };
}

/** kind and the node image a registry run uses (clusters/lab/versions.env). */
export const KIND = {
  version: need("KIND_VERSION"),
  nodeImage: need("KIND_NODE_IMAGE"),
  /** The Kubernetes version of that image (its tag). */
  nodeKubernetes: (/:(v[\d.]+)/.exec(need("KIND_NODE_IMAGE"))?.[1] ?? "unknown") as string,
} as const;

/** k3d and the k3s image it runs (clusters.md §2.2). */
export const K3D = {
  version: "v5.9.0",
  image: "rancher/k3s:v1.35.5-k3s1",
} as const;

export const CILIUM_CHART = "oci://quay.io/cilium/charts/cilium";
