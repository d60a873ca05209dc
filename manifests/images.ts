import { labEnabled, readLab } from "../clusters/lab.ts";

/**
 * Every image the specs run, pinned. The curl image is pinned by the digest the seed lab gives; for the others
 * no digest was verifiable from this workplace, so they are pinned by exact tag (override with env).
 * With LAB_IMAGES=1 the offline lab's images (built on this machine, clusters/lab/lab.sh) stand in: agnhost
 * built from the Kubernetes module, and one Debian tools image for curl, the holder (node) and tcpdump.
 */
const lab = labEnabled() ? readLab() : undefined;

export const IMAGES = {
  /** The probe image, pinned by digest as the seed lab gives it. */
  curl:
    process.env.CURL_IMAGE ??
    lab?.toolsImage ??
    "curlimages/curl:8.10.1@sha256:d9b4541e214bcd85196d6e92e2753ac6d0ea699f0af5741f8c6cccbfcf00ef4b",
  /** Kubernetes e2e's agnhost: `netexec` serves HTTP and reports the client address the backend saw. */
  agnhost: process.env.AGNHOST_IMAGE ?? lab?.agnhostImage ?? "registry.k8s.io/e2e-test-images/agnhost:2.52",
  /** Runs our holder (manifests/holder/holder.mjs, mounted from a ConfigMap). */
  node: process.env.HOLDER_IMAGE ?? lab?.toolsImage ?? "docker.io/library/node:20.18.0-alpine3.20",
  /** tcpdump on a node's host network for the VXLAN capture. */
  netshoot: process.env.NETSHOOT_IMAGE ?? lab?.toolsImage ?? "docker.io/nicolaka/netshoot:v0.13",
} as const;
