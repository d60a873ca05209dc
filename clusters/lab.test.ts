import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ciliumDeps,
  LAB_DIR,
  labHelmValues,
  labProfile,
  parseCiliumDeps,
  parseEnvFile,
  readLab,
} from "./lab.ts";
import { formatPlan, labChanges, makeProfile } from "./profile.ts";

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

  it("every node mounts the images lab.sh unpacked once, read-only, where its node image's links point", () => {
    const v = lab.ciliumVersions[0] as string;
    const nodes = () =>
      (makeProfile({ provider: "kind", mode: "kpr", cilium: v, lab }).kindConfig as { nodes: object[] })
        .nodes;
    // a node image of the earlier layout holds its images itself: nothing to mount
    expect(labProfile(lab, v).store).toBeNull();
    expect(nodes()).toEqual([{ role: "control-plane" }, { role: "worker" }, { role: "worker" }]);
    const store = join(cache, "out", "node-store");
    mkdirSync(join(store, "root"), { recursive: true });
    expect(labProfile(lab, v).store).toBe(store);
    const mount = { hostPath: store, containerPath: "/kind/lab-store", readOnly: true };
    expect(nodes()).toEqual(
      ["control-plane", "worker", "worker"].map((role) => ({ role, extraMounts: [mount] })),
    );
    rmSync(store, { recursive: true });
  });

  it("a version versions.env does not name: its images, loaded into the nodes, built when asked; an older minor refused; kind only", () => {
    const lp = labProfile(lab, "1.19.8");
    expect(lp).toMatchObject({ declared: false, patch: null, deps: [] });
    expect(lp.load).toEqual([
      "localhost/lab/cilium:v1.19.8-src",
      "localhost/lab/operator-generic:v1.19.8-src",
    ]);
    expect(labChanges(lp)).toMatch(
      /^no replace declared for it: cilium-deps\.tsv's lines of other versions apply where it pins the same module version/,
    );
    expect(formatPlan(makeProfile({ provider: "kind", mode: "kpr", cilium: "1.19.8", lab }))).toContain(
      "# lab build of Cilium 1.19.8: no replace declared for it",
    );
    expect(() => makeProfile({ provider: "kind", mode: "kpr", cilium: "1.17.0", lab })).toThrow(
      /^Cilium 1\.17\.0 is older than every minor the suite declares/,
    );
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

describe("what the lab changes in a Cilium build (clusters/lab/cilium-deps.tsv)", () => {
  const table = parseCiliumDeps(readFileSync(join(LAB_DIR, "cilium-deps.tsv"), "utf8"));

  it("every line is a replace of a version the lab builds, to another served version of the same module", () => {
    expect(table.length).toBeGreaterThan(0);
    for (const d of table) {
      expect(lab.ciliumVersions).toContain(d.version);
      expect(d.replacement.startsWith(`${d.module}@`)).toBe(true);
      expect(d.replacement).not.toBe(d.pinned);
      expect(d.why.length).toBeGreaterThan(40);
    }
    expect(() => parseCiliumDeps("1.20.2\tm\tm@v1\n")).toThrow(/line 1 needs 5 tab-separated fields/);
  });

  it("plan names the declared replaces before the build, and the build's label after it", () => {
    const v = "1.20.2";
    const before = labChanges(labProfile(lab, v));
    expect(before).toContain("replace github.com/osrg/gobgp/v4: github.com/osrg/gobgp/v4@v4.6.1-");
    expect(before).toContain("not built yet");
    expect(formatPlan(makeProfile({ provider: "kind", mode: "kpr", cilium: v, lab }))).toContain(
      `# lab build of Cilium ${v}: replace github.com/osrg/gobgp/v4`,
    );
    expect(labChanges(labProfile(lab, "1.19.7"))).toMatch(/^no dependency replaced;/);
    mkdirSync(join(cache, "out"), { recursive: true });
    writeFileSync(join(cache, "out", `cilium-${v}.patch.txt`), "replace a: a@v1 => a@v2\nnone: unchanged\n");
    expect(labChanges(labProfile(lab, v))).toBe("replace a: a@v1 => a@v2; none: unchanged");
  });

  // The table against the versions' own go.mod, where the lab's module cache holds them (skipped otherwise).
  const gomod = join(
    process.env.LAB_CACHE ?? join(homedir(), ".cache", "datapath-conformance", "lab"),
    "gomod",
  );
  for (const version of readLab().ciliumVersions) {
    const mod = join(gomod, "cache", "download", "github.com", "cilium", "cilium", "@v", `v${version}.mod`);
    it.skipIf(!existsSync(mod))(
      `Cilium ${version}: each replaced module is pinned as the table says (its go.mod in the lab's module cache)`,
      () => {
        const json = JSON.parse(execFileSync("go", ["mod", "edit", "-json", mod], { encoding: "utf8" })) as {
          Require?: { Path: string; Version: string }[];
          Replace?: { Old: { Path: string }; New: { Path: string; Version: string } }[];
        };
        for (const d of ciliumDeps(version)) {
          const r = json.Replace?.find((x) => x.Old.Path === d.module);
          const q = json.Require?.find((x) => x.Path === d.module);
          expect(r ? `${r.New.Path}@${r.New.Version}` : `${q?.Path}@${q?.Version}`).toBe(d.pinned);
        }
      },
    );
  }
});
