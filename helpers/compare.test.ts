import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../cli/main.ts";
import { TOPICS } from "../suites/topics.ts";
import { bundleTopics } from "./bundle/read.ts";
import { checkBundle } from "./check.ts";
import { compareBundles, compareWithNearest, formatComparison, moved } from "./compare.ts";
import { BundleCopies, editJson, KUBE_SVC_LINE, shipped } from "./testing/tamper.ts";

const copies = new BundleCopies();
afterAll(() => copies.cleanup());
const quiet = { out: () => {}, err: () => {}, readStdin: async () => "" };

describe("compare A B", () => {
  it("a bundle against its copy: nothing changed, exit 0", async () => {
    const c = await compareBundles(shipped("kpr"), copies.copy("kpr"), TOPICS);
    expect(c.regressed).toBe(false);
    expect(c.changes.filter((x) => x.severity !== "other")).toEqual([]);
  });

  it("a verdict that turned from pass to fail is a regression, listed first", async () => {
    const b = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
      t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
    );
    const c = await compareBundles(shipped("kpr"), b, TOPICS);
    expect(c.regressed).toBe(true);
    // one kube-proxy rule breaks three kpr properties: KUBE-SVC lines, ClusterIP lines, kube-proxy chains
    expect(c.changes.map((x) => `${x.severity} ${x.id}: ${x.a} → ${x.b}`)).toEqual([
      "regression iptables.kube-svc-lines: pass (0) → fail (1)",
      "regression iptables.cluster-ip-lines: pass (0) → fail (1)",
      "regression iptables.kube-proxy-chains: pass (0) → fail (1)",
    ]);
    expect(formatComparison(c)).toContain(
      "| `iptables.kube-svc-lines` | pass (0) | fail (1) | **pass → fail**",
    );
  });

  it("a topic missing from B makes its properties disappear (exit 1 from the CLI)", async () => {
    const b = copies.copy("kube-proxy");
    rmSync(join(b, "calls", "ghost.jsonl"));
    const c = await compareBundles(shipped("kube-proxy"), b, TOPICS);
    expect(c.changes.filter((v) => v.kind === "disappeared").map((v) => v.id)).toContain("ghost.fails-fast");
    expect(await main(["compare", shipped("kube-proxy"), b], quiet)).toBe(1);
  });

  it("kpr vs kube-proxy: no verdict regression (each judged by its mode)", async () => {
    const c = await compareBundles(shipped("kpr"), shipped("kube-proxy"), TOPICS);
    expect(c.changes.filter((x) => x.severity === "regression")).toEqual([]);
  });

  it("1.19 → 1.20 beside kube-proxy: the new known issue and the 2692× move, exit 1", async () => {
    const a = join("suites", "bundles", "1.19", "kube-proxy");
    const b = join("suites", "bundles", "1.20", "kube-proxy");
    const c = await compareBundles(a, b, TOPICS);
    expect(c.regressed).toBe(true);
    const known = c.changes.filter((x) => x.severity === "new-known-issue").map((x) => x.id);
    expect(known).toEqual([
      "ghost.fails-fast",
      "ghost.errno",
      "ghost.seconds",
      "traffic-policy.itp-far",
      "measure.ghost-fail-fast-p90",
    ]);
    const text = formatComparison(c);
    expect(text).toMatch(/Regression: 5 new known issues/);
    expect(text).toMatch(/known issue of Cilium 1\.20\.2: curl to the ghost ClusterIP hangs/);
    expect(text).toContain("0.0019 s → 5 s (2692×; tolerance 10×)");
    // the policy map's rename is declared behaviour of 1.20: listed, not a regression
    expect(c.changes.find((x) => x.id === "program.policy-map")).toMatchObject({
      severity: "other",
      kind: "declared",
    });
    const out: string[] = [];
    expect(await main(["compare", a, b], { ...quiet, out: (s: string) => out.push(s) })).toBe(1);
    expect(out.join("")).toContain("New known issues (5)");
  });

  it("1.18 → 1.19 in kpr: the known issues of 1.18 are gone, which is news, not a regression", async () => {
    const c = await compareBundles(
      join("suites", "bundles", "1.18", "kpr"),
      join("suites", "bundles", "1.19", "kpr"),
      TOPICS,
    );
    const gone = c.changes.filter((x) => x.kind === "known issue gone").map((x) => x.id);
    expect(gone).toEqual(["nodeport.bind-protection", "ghost.errno", "traffic-policy.itp-far"]);
    expect(c.changes.filter((x) => x.severity === "new-known-issue")).toEqual([]);
    // both recorded with the same topics: no regression at all, and what 1.19 declares differently is listed
    expect(c.changes.filter((x) => x.severity === "regression")).toEqual([]);
    expect(c.regressed).toBe(false);
    expect(c.changes.filter((x) => x.kind === "declared").map((x) => x.id)).toEqual([
      "ghost.wildcard-entry",
      "lb.wildcard-entry",
      "measure.lb-entries-per-service",
    ]);
  });

  it("an upgrade bundle against the fresh bundle of its target: the upgrade topic is not missing from B", async () => {
    const c = await compareBundles(
      join("suites", "bundles", "upgrade-1.19-1.20", "kpr"),
      join("suites", "bundles", "1.20", "kpr"),
      TOPICS,
    );
    const upgrade = c.changes.filter((x) => x.id.startsWith("upgrade."));
    expect(upgrade.length).toBeGreaterThan(0);
    expect(upgrade.every((x) => x.severity === "other" && x.kind === "not recorded in B")).toBe(true);
  });

  it("a property B recorded but could not judge here is not a regression: its reason is said", async () => {
    // the topics both recorded (existing/kpr predates the Service-surface topics: those would be judged in A
    // and skipped in B, a regression by design)
    const b = join("suites", "bundles", "existing", "kpr");
    const both = TOPICS.filter((t) => bundleTopics(b).includes(t.name));
    const c = await compareBundles(join("suites", "bundles", "1.19", "kpr"), b, both);
    expect(c.changes.find((x) => x.id === "nodeport.outside-http-200")).toMatchObject({
      severity: "other",
      kind: "not checked in B",
    });
    expect(c.regressed).toBe(false);
  });
});

describe("the comparison with the nearest shipped bundle", () => {
  it("a run of a few topics on a patch the suite ships none of: compared over the topics it recorded", async () => {
    // a copy of the 1.19.7 kpr bundle that kept two topics' calls and calls itself 1.19.6 (WRITTEN BY US, an
    // edit; what the lab's run lab-1196 was: the Service-surface topics alone)
    const dir = copies.copy("kpr");
    for (const f of readdirSync(join(dir, "calls")))
      if (!["config.jsonl", "loadbalancer.jsonl"].includes(f)) rmSync(join(dir, "calls", f));
    editJson(dir, "bundle.json", (m) => ({ ...m, cilium: "1.19.6" }));
    const near = await compareWithNearest(await checkBundle(dir, TOPICS), TOPICS);
    expect(near?.why).toMatch(
      /suites\/bundles\/1\.19\/kpr .*, over the 2 topics this run recorded \(\d+ more in that bundle\)$/,
    );
    expect(near?.comparison.regressed).toBe(false);
    const props = TOPICS.filter((t) => ["config", "loadbalancer"].includes(t.name)).flatMap(
      (t) => t.properties,
    );
    expect(near?.comparison.unchanged).toBe(props.length);
    // `compare A B` on the same pair: every topic the copy lacks is a regression
    const whole = await compareBundles(shipped("kpr"), dir, TOPICS);
    expect(whole.regressed).toBe(true);
  });
});

describe("tolerances", () => {
  it("a factor with a floor: noise under the floor is the same, a thousandfold move is named", () => {
    const t = { factor: 10, floor: 0.01, unit: "s" };
    expect(moved(t, "[0.0001,0.004]", "[0.006,0.0002]")).toBeNull();
    expect(moved(t, "[0.005668,0.00183]", "[5.001847,5.001301]")).toBe(
      "0.0057 s → 5 s (882×; tolerance 10×)",
    );
    expect(moved(t, "0.05", "0.2")).toBeNull();
  });
  it("exact by default; abs; ignore", () => {
    expect(moved(undefined, "EPERM", "EHOSTUNREACH")).toBe("EPERM → EHOSTUNREACH");
    expect(moved(undefined, "7", "7")).toBeNull();
    expect(moved({ abs: 2 }, "10", "11")).toBeNull();
    expect(moved({ abs: 2 }, "10", "13")).toBe("10 → 13 (by 3, tolerance ±2)");
    expect(moved({ ignore: "an id" }, "1", "2")).toBeNull();
  });
});
