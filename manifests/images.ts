/**
 * Every image the specs run, pinned. The curl image is pinned by the digest the lab gives; for the others
 * no digest was verifiable from this workplace, so they are pinned by exact tag (override with env).
 */
export const IMAGES = {
  /** The lab's probe image, pinned by digest as the lab gives it. */
  curl: "curlimages/curl:8.10.1@sha256:d9b4541e214bcd85196d6e92e2753ac6d0ea699f0af5741f8c6cccbfcf00ef4b",
  /** Kubernetes e2e's agnhost: `netexec` serves HTTP and reports the client address the backend saw. */
  agnhost: process.env.AGNHOST_IMAGE ?? "registry.k8s.io/e2e-test-images/agnhost:2.52",
  /** Runs our holder (manifests/holder/holder.mjs, mounted from a ConfigMap). */
  node: process.env.HOLDER_IMAGE ?? "docker.io/library/node:20.18.0-alpine3.20",
  /** tcpdump on a node's host network for the VXLAN capture. */
  netshoot: process.env.NETSHOOT_IMAGE ?? "docker.io/nicolaka/netshoot:v0.13",
} as const;
