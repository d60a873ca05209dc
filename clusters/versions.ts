import { UserError } from "../helpers/errors.ts";

/**
 * Supported Cilium minors and the patch each one installs (the newest confirmed in
 * ../shared/knowledge/clusters.md §4.1, or seen in the lab). Override with CILIUM_VERSION=1.19 or =1.19.6.
 */
export const CILIUM_PATCHES: Record<string, string> = {
  "1.18": "1.18.12",
  "1.19": "1.19.6",
  "1.20": "1.20.1",
};
export const CILIUM_MINORS = Object.keys(CILIUM_PATCHES);
export const DEFAULT_CILIUM_MINOR = "1.20";

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

/** kind and its node image (digest from the kind release notes, clusters.md §1.6). */
export const KIND = {
  version: "v0.31.0",
  nodeImage: "kindest/node:v1.35.0@sha256:452d707d4862f52530247495d180205e029056831160e22870e37e3f6c1ac31f",
} as const;

/** k3d and the k3s image it runs (clusters.md §2.2). */
export const K3D = {
  version: "v5.9.0",
  image: "rancher/k3s:v1.35.5-k3s1",
} as const;

export const CILIUM_CHART = "oci://quay.io/cilium/charts/cilium";
