import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { labHelmValues, labProfile, parseEnvFile, readLab } from "./lab.ts";
import { formatPlan, makeProfile } from "./profile.ts";

const cache = mkdtempSync(join(tmpdir(), "dpc-lab-cache-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));
const lab = readLab({ LAB_CACHE: cache });

describe("the offline lab as an image source", () => {
  it("reads versions.env (comments, quotes) as the lab script does", () => {
    expect(parseEnvFile('# c\nA=1\nB="x y"\n  C=z\nlower=no\n')).toEqual({ A: "1", B: "x y", C: "z" });
    expect(lab.ciliumVersions.length).toBeGreaterThan(0);
    expect(lab.binDir).toBe(join(cache, "bin"));
  });

  it("values for this machine: own images never pulled, no SYS_RESOURCE, no Envoy or Hubble relay", () => {
    const v = labHelmValues(labProfile(lab, lab.ciliumVersions[0] as string)) as {
      image: Record<string, unknown>;
      operator: { image: Record<string, unknown> };
      securityContext: { capabilities: Record<string, string[]> };
      l7Proxy: boolean;
      envoy: { enabled: boolean };
    };
    expect(v.image).toMatchObject({ pullPolicy: "Never", useDigest: false });
    expect(String(v.image.override)).toMatch(/^localhost\/lab\/cilium:v1\.\d+\.\d+-src$/);
    expect(v.operator.image.pullPolicy).toBe("Never");
    for (const caps of Object.values(v.securityContext.capabilities))
      expect(caps).not.toContain("SYS_RESOURCE");
    expect(v.l7Proxy).toBe(false);
    expect(v.envoy.enabled).toBe(false);
  });

  it("loads the Cilium images only when the node image does not hold them", () => {
    const v = lab.ciliumVersions[0] as string;
    expect(labProfile(lab, v).load).toHaveLength(2);
    mkdirSync(join(cache, "out"), { recursive: true });
    writeFileSync(
      join(cache, "out", "node-images.txt"),
      `localhost/lab/cilium:v${v}-src\nlocalhost/lab/operator-generic:v${v}-src\n`,
    );
    expect(labProfile(lab, v).load).toEqual([]);
  });

  it("a version the lab does not build is one clear line; kind only", () => {
    expect(() => labProfile(lab, "1.17.0")).toThrow(/LAB_IMAGES=1: the lab builds Cilium .*, not 1\.17\.0/);
    expect(() => makeProfile({ provider: "k3d", mode: "kpr", lab })).toThrow(/kind only/);
  });

  it("the plan shows the lab node image, the local chart and cgroup v1 kubelet setting; without the lab nothing changes", () => {
    const withLab = formatPlan(makeProfile({ provider: "kind", mode: "kpr", lab }));
    expect(withLab).toContain("--image localhost/lab/kind-node:");
    expect(withLab).toContain(join(cache, "out", `cilium-${lab.ciliumVersions[0]}`, "chart"));
    expect(withLab).toContain("failCgroupV1: false");
    const plain = formatPlan(makeProfile({ provider: "kind", mode: "kpr" }));
    expect(plain).not.toMatch(/localhost\/lab|failCgroupV1|pullPolicy: Never/);
  });
});
