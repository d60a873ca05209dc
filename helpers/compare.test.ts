import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../cli/main.ts";
import { TOPICS } from "../suites/topics.ts";
import { compareBundles, formatComparison } from "./compare.ts";
import { BundleCopies, KUBE_SVC_LINE, shipped } from "./testing/tamper.ts";

const copies = new BundleCopies();
afterAll(() => copies.cleanup());

describe("compare A B", () => {
  it("a bundle against its copy: nothing changed, exit 0", async () => {
    const c = await compareBundles(shipped("kpr"), copies.copy("kpr"), TOPICS);
    expect(c.regressed).toBe(false);
    expect(c.values.filter((v) => v.changed)).toEqual([]);
  });

  it("a verdict that turned from pass to fail is a regression, with the key value that moved", async () => {
    const b = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
      t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
    );
    const c = await compareBundles(shipped("kpr"), b, TOPICS);
    expect(c.regressed).toBe(true);
    // one kube-proxy rule breaks three kpr properties: KUBE-SVC lines, ClusterIP lines, kube-proxy chains
    expect(c.verdicts.filter((v) => v.kind !== "same").map((v) => `${v.id}: ${v.a} → ${v.b}`)).toEqual([
      "iptables.kube-svc-lines: pass → fail",
      "iptables.cluster-ip-lines: pass → fail",
      "iptables.kube-proxy-chains: pass → fail",
    ]);
    expect(c.values.find((v) => v.name === "KUBE-SVC lines")).toEqual({
      name: "KUBE-SVC lines",
      a: "0",
      b: "1",
      changed: true,
    });
    expect(formatComparison(c)).toContain("| `iptables.kube-svc-lines` | pass | fail | **changed** |");
  });

  it("a topic missing from B makes its properties disappear (exit 1 from the CLI)", async () => {
    const b = copies.copy("kube-proxy");
    rmSync(join(b, "calls", "ghost.jsonl"));
    const c = await compareBundles(shipped("kube-proxy"), b, TOPICS);
    expect(c.verdicts.filter((v) => v.kind === "disappeared").map((v) => v.id)).toContain("ghost.fails-fast");
    const io = { out: () => {}, err: () => {}, readStdin: async () => "" };
    expect(await main(["compare", shipped("kube-proxy"), b], io)).toBe(1);
  });

  it("kpr vs kube-proxy: no verdict changes (each judged by its mode), the key values that differ by mode do", async () => {
    const c = await compareBundles(shipped("kpr"), shipped("kube-proxy"), TOPICS);
    expect(c.regressed).toBe(false);
    const changed = c.values.filter((v) => v.changed).map((v) => v.name);
    expect(changed).toEqual(
      expect.arrayContaining([
        "KubeProxyReplacement",
        "ghost errno",
        "NodePort agent entry",
        "holder socket peer is the backend",
      ]),
    );
    expect(changed).not.toContain("program");
  });
});
