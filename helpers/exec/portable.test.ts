import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { UpgradePlan } from "../observe/context.ts";
import {
  portableArgv,
  portableText,
  portableUpgrade,
  resolvePortable,
  resolveUpgrade,
  SUITE_ROOT,
} from "./portable.ts";

const recording = {
  bundle: "/work/main/results/lab-upgrade/kpr",
  labCache: "/root/.cache/datapath-conformance/lab",
};
const elsewhere = { bundle: "/home/ci/checkout/suites/bundles/kpr-upgrade", labCache: "/srv/lab-cache" };

/** An upgrade leg as the lab plans it on the recording machine (paths WRITTEN BY US after run lab-upgrade's). */
const plan: UpgradePlan = {
  from: "1.19.6",
  fromMinor: "1.19",
  to: "1.19.7",
  toMinor: "1.19",
  valuesFile: `${recording.bundle}/cilium-values.yaml`,
  lab: { chart: `${recording.labCache}/out/cilium-1.19.7/chart`, cluster: "cdc-kpr", load: [], set: [] },
};

describe("portable paths", () => {
  it("bundle.json keeps the values file relative to the bundle and the lab's chart by name", () => {
    const kept = portableUpgrade(plan, recording);
    expect(kept.valuesFile).toBe("cilium-values.yaml");
    expect(kept.lab?.chart).toBe("$LAB_CACHE/out/cilium-1.19.7/chart");
    // another machine resolves them against its own folders
    const there = resolveUpgrade(kept, elsewhere);
    expect(there.valuesFile).toBe(`${elsewhere.bundle}/cilium-values.yaml`);
    expect(there.lab?.chart).toBe("/srv/lab-cache/out/cilium-1.19.7/chart");
  });

  it("a recorded command names no folder of the machine, and matches the same command run elsewhere", () => {
    const argv = (p: UpgradePlan) => [
      "helm",
      "upgrade",
      "cilium",
      p.lab?.chart ?? "",
      "--values",
      p.valuesFile,
      "--set",
      "upgradeCompatibility=1.19",
    ];
    const recorded = portableArgv(argv(plan), recording);
    expect(recorded).toEqual([
      "helm",
      "upgrade",
      "cilium",
      "$LAB_CACHE/out/cilium-1.19.7/chart",
      "--values",
      "$BUNDLE/cilium-values.yaml",
      "--set",
      "upgradeCompatibility=1.19",
    ]);
    const replayed = resolveUpgrade(portableUpgrade(plan, recording), elsewhere);
    expect(portableArgv(argv(replayed), elsewhere)).toEqual(recorded);
  });

  it("a script of this checkout is recorded as $SUITE/…, and resolves to the checkout that replays it", () => {
    const script = join(SUITE_ROOT, "scripts", "conformance-here.mjs");
    const nested = join(recording.bundle, "after-upgrade");
    // the bundle wins over the checkout it lies in (results/… is inside the checkout)
    const inside = { bundle: join(SUITE_ROOT, "results", "run", "kpr") };
    expect(portableArgv(["node", script, join(inside.bundle, "after-upgrade")], inside)).toEqual([
      "node",
      "$SUITE/scripts/conformance-here.mjs",
      "$BUNDLE/after-upgrade",
    ]);
    expect(portableArgv(["node", script, nested], recording)).toEqual([
      "node",
      "$SUITE/scripts/conformance-here.mjs",
      "$BUNDLE/after-upgrade",
    ]);
    expect(resolvePortable("$SUITE/scripts/conformance-here.mjs", elsewhere)).toBe(script);
    // the checkout itself is never a word's whole meaning (a cwd argument stays as it is)
    expect(portableArgv([SUITE_ROOT], elsewhere)).toEqual([SUITE_ROOT]);
  });

  it("what a call printed names no folder of the machine either (the nested run's banner, WRITTEN BY US after run up-119-120-kp-d's)", () => {
    const banner = `\n\u001b[1m RUN \u001b[22m v4.1.12 \u001b[90m${SUITE_ROOT}\u001b[39m\n\n[conformance] into ${recording.bundle}/after-upgrade; chart ${recording.labCache}/out/cilium-1.20.2/chart\n`;
    expect(portableText(banner, recording)).toBe(
      "\n\u001b[1m RUN \u001b[22m v4.1.12 \u001b[90m$SUITE\u001b[39m\n\n[conformance] into $BUNDLE/after-upgrade; chart $LAB_CACHE/out/cilium-1.20.2/chart\n",
    );
    // a longer name that only starts like a root is another folder
    expect(portableText(`${SUITE_ROOT}-old/x and /tmp/y`, recording)).toBe(`${SUITE_ROOT}-old/x and /tmp/y`);
  });

  it("paths outside the roots (the cluster's, a bundle from before) stay as they are", () => {
    expect(portableArgv(["cat", "/proc/net/tcp", "/elsewhere/other/file"], recording)).toEqual([
      "cat",
      "/proc/net/tcp",
      "/elsewhere/other/file",
    ]);
    expect(resolvePortable("/old/absolute/values.yaml", elsewhere, "bundle")).toBe(
      "/old/absolute/values.yaml",
    );
    expect(resolvePortable("$LAB_CACHE/out", { bundle: "/b" })).toBe("$LAB_CACHE/out");
  });

  it("a bundle named relative to the working folder (`check suites/bundles/…`) replays the same command", () => {
    const relative = { bundle: "suites/bundles/upgrade-1.19-1.20/kpr", labCache: "/srv/lab-cache" };
    const argv = (p: UpgradePlan) => ["helm", "upgrade", "cilium", "--values", p.valuesFile];
    const replayed = resolveUpgrade(portableUpgrade(plan, recording), relative);
    expect(replayed.valuesFile).toBe(
      `${process.cwd()}/suites/bundles/upgrade-1.19-1.20/kpr/cilium-values.yaml`,
    );
    expect(portableArgv(argv(replayed), relative)).toEqual([
      "helm",
      "upgrade",
      "cilium",
      "--values",
      "$BUNDLE/cilium-values.yaml",
    ]);
  });
});
