/** The manifests the specs apply, rendered as a run renders them and validated against the Kubernetes API schemas. */
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { renderManifest } from "../helpers/observe/workloads.ts";
import { IMAGES } from "./images.ts";

const FILES: [string, Record<string, string>][] = [
  ["namespace.yaml", {}],
  ["web.yaml", {}],
  ["web-np.yaml", {}],
  ["ghost.yaml", {}],
  ["holder.yaml", { WEB_CLUSTER_IP: "10.96.112.41", HOLDER_NAME: "holder", SOURCE_PORT: "40404" }],
  ["holder.yaml", { WEB_CLUSTER_IP: "fd00:10:96::5e1", HOLDER_NAME: "holder6", SOURCE_PORT: "40406" }],
  ["ipv6.yaml", {}],
  ["capture.yaml", { NODE: "cdc-kpr-worker" }],
  ["dns-client.yaml", { NODE: "cdc-kpr-worker" }],
  [
    "conn-client.yaml",
    {
      NAME: "conn-np",
      NODE: "cdc-kpr-worker",
      HOST_NETWORK: "true",
      TARGET_HOST: "172.31.100.3",
      TARGET_PORT: "30780",
      SOURCE_PORT: "40420",
    },
  ],
  [
    "request-loop.yaml",
    {
      NODE: "cdc-kpr-worker",
      TARGETS: "clusterip=10.96.112.41:80,nodeport=172.31.100.3:30780",
      DURATION_MS: "900000",
      INTERVAL_MS: "50",
      SOURCE_PORTS: "20000-39999",
    },
  ],
  ["edge.yaml", { EDGE_NODE: "cdc-kpr-worker2", FAR_NODE: "cdc-kpr-worker" }],
  ["loadbalancer.yaml", { POOL: "cca-dp-r1234-lb" }],
  ["external-ip.yaml", { EXTERNAL_IP: "172.31.100.248" }],
  ["traffic-policy.yaml", { POOL: "cca-dp-r1234-lb" }],
  ["session-affinity.yaml", {}],
  ["host-network.yaml", { EDGE_NODE: "cdc-kpr-worker2", FAR_NODE: "cdc-kpr-worker" }],
  ["web-lb.yaml", { POOL: "cca-dp-r1234-lb" }],
  [
    "load-capture.yaml",
    {
      NAME: "capture-upgrade",
      LEG: "upgrade",
      NODE: "cdc-kpr-worker",
      FILTER: "host 10.244.1.7 and tcp[tcpflags] & (tcp-syn|tcp-fin|tcp-rst) != 0",
      COUNT: "200000",
    },
  ],
  [
    "load-pcap.yaml",
    {
      NAME: "pcap-upgrade-0",
      LEG: "upgrade",
      NODE: "cdc-kpr-worker",
      FILTER:
        "(tcp and (host 10.244.1.7 or portrange 40410-40422)) or (udp port 8472 and udp[42:4] = 0x0af40107)",
      COUNT: "2000000",
      CILIUM_IMAGE: "localhost/lab/cilium:v1.20.2",
    },
  ],
];

async function validate(doc: Record<string, unknown>): Promise<void> {
  const kind = String(doc.kind);
  const mod =
    kind === "Deployment" ? await import("kubernetes-models/apps/v1") : await import("kubernetes-models/v1");
  const Model = (mod as unknown as Record<string, new (d: unknown) => { validate(): void }>)[kind];
  if (!Model) throw new Error(`no schema for kind ${kind}`);
  new Model(doc).validate();
}

describe("manifests", () => {
  for (const [file, vars] of FILES) {
    it(`${file} renders and validates against the Kubernetes schemas`, async () => {
      const docs = parseAllDocuments(renderManifest(file, "cca-dp-r1234", vars)).map(
        (d) => d.toJSON() as Record<string, unknown>,
      );
      expect(docs.length).toBeGreaterThan(0);
      for (const doc of docs) {
        await validate(doc);
        const meta = doc.metadata as { name: string; namespace?: string };
        if (doc.kind !== "Namespace") expect(meta.namespace, `${file} ${meta.name}`).toBe("cca-dp-r1234");
      }
    });
  }

  it("lb-pool.yaml: Cilium's pool, owned by the run namespace, serving only the Services labelled with its name", () => {
    const [pool] = parseAllDocuments(
      renderManifest("lb-pool.yaml", "cca-dp-r1234", {
        POOL: "cca-dp-r1234-lb",
        NAMESPACE_UID: "0b1c",
        POOL_START: "172.31.100.240",
        POOL_STOP: "172.31.100.247",
      }),
    ).map((d) => d.toJSON());
    expect(pool).toMatchObject({
      apiVersion: "cilium.io/v2",
      kind: "CiliumLoadBalancerIPPool",
      metadata: {
        name: "cca-dp-r1234-lb",
        ownerReferences: [{ apiVersion: "v1", kind: "Namespace", name: "cca-dp-r1234", uid: "0b1c" }],
      },
      spec: {
        blocks: [{ start: "172.31.100.240", stop: "172.31.100.247" }],
        serviceSelector: { matchLabels: { "cilium-datapath-conformance/pool": "cca-dp-r1234-lb" } },
      },
    });
    const lb = parseAllDocuments(
      renderManifest("loadbalancer.yaml", "cca-dp-r1234", { POOL: "cca-dp-r1234-lb" }),
    );
    for (const d of lb)
      expect(d.toJSON().metadata.labels).toEqual({ "cilium-datapath-conformance/pool": "cca-dp-r1234-lb" });
  });

  it("a bad manifest is caught by the validation", async () => {
    await expect(
      validate({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "x" },
        spec: { ports: [{ port: "eighty" }] },
      }),
    ).rejects.toThrow(/port/);
  });

  it("images are pinned: a digest or an exact version tag, never latest", () => {
    expect(IMAGES.curl).toMatch(/@sha256:[0-9a-f]{64}$/);
    for (const image of Object.values(IMAGES))
      expect(image).toMatch(/:(v?\d+(\.\d+)+[\w.-]*)(@sha256:[0-9a-f]{64})?$/);
  });

  it("the web Service matches the lab: port 80 → 8080, NodePort 30780", () => {
    const web = parseAllDocuments(renderManifest("web.yaml", "cca-dp")).map((d) => d.toJSON());
    expect(web.find((d) => d.kind === "Service").spec.ports[0]).toMatchObject({ port: 80, targetPort: 8080 });
    const np = parseAllDocuments(renderManifest("web-np.yaml", "cca-dp"))[0]?.toJSON();
    expect(np.spec).toMatchObject({
      type: "NodePort",
      ports: [{ port: 80, targetPort: 8080, nodePort: 30780 }],
    });
  });
});
