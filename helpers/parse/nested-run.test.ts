import { describe, expect, it } from "vitest";
import { parseRunInputs } from "../../clusters/run-inputs.ts";
// @ts-expect-error: a plain JavaScript script (it runs under node without a build step), no declarations
import { nestedEnv, outsideOf, summaryLines } from "../../scripts/conformance-here.mjs";
import { parseNestedRun } from "./nested-run.ts";

/** Two verdict lines as a nested run writes them to verdicts.jsonl (WRITTEN BY US, shortened). */
const VERDICTS = [
  JSON.stringify({
    id: "iptables.kpr-mode",
    status: "pass",
    expected: "True",
    observed: "True",
    evidence: [],
  }),
  JSON.stringify({
    id: "ghost.fails-fast",
    status: "known-issue",
    expected: "7",
    observed: "28",
    deviation: { kind: "known-issue", upstream: "cilium/cilium PR 48578" },
    evidence: [{ quote: "x" }],
  }),
  JSON.stringify({
    id: "upgrade.same-backend",
    status: "skip",
    expected: "",
    observed: "-",
    reason: "no leg",
  }),
].join("\n");

describe("the nested run after a leg (scripts/conformance-here.mjs)", () => {
  it("prints what the upgrade records, and parseNestedRun reads it back", () => {
    const text = ["bundle after-upgrade exit 0", ...summaryLines(VERDICTS)].join("\n");
    const run = parseNestedRun(text);
    expect(run).toMatchObject({ label: "after-upgrade", exit: "0", complete: true, unreadable: [] });
    expect(run.verdicts.map((v) => [v.id, v.status, v.line])).toEqual([
      ["iptables.kpr-mode", "pass", 2],
      ["ghost.fails-fast", "known-issue", 3],
      ["upgrade.same-backend", "skip", 4],
    ]);
    expect(run.verdicts[1]?.upstream).toBe("cilium/cilium PR 48578");
    expect(run.verdicts[2]?.reason).toBe("no leg");
  });

  it("a run that left no bundle is incomplete; an unreadable line is kept with its number", () => {
    const run = parseNestedRun("bundle after-rollback exit 1 (the nested run left no bundle)\n{oops\n");
    expect(run.complete).toBe(false);
    expect(run.exit).toBe("1 (the nested run left no bundle)");
    expect(run.unreadable).toEqual([{ line: 2, text: "{oops" }]);
    expect(() => parseNestedRun("RUN v4.1.12")).toThrow(/not the output of scripts\/conformance-here.mjs/);
  });

  it("the nested run gets the existing provider and none of the calling run's own settings", () => {
    const env = nestedEnv(
      {
        PATH: "/usr/bin",
        LAB_IMAGES: "1",
        UPGRADE_TO: "1.20",
        ROLLBACK: "1",
        CLUSTER_PROVIDER: "kind",
        RUN_ID: "up-119-120-kpr",
        KEEP_CLUSTER: "1",
        CILIUM_VERSION: "1.19",
        DATAPATH_PROFILE: "native-bpf",
        CONFORMANCE_JUNIT: "/tmp/j.xml",
        VITEST_WORKER_ID: "3",
      },
      { mode: "kpr", label: "after-upgrade", kubeconfig: "/tmp/k", results: "/tmp/r" },
    );
    expect(env).toEqual({
      PATH: "/usr/bin",
      LAB_IMAGES: "1",
      CLUSTER_PROVIDER: "existing",
      CONFORMANCE_EXISTING_OK: "1",
      CONFORMANCE_MODE: "kpr",
      RUN_ID: "after-upgrade",
      KUBECONFIG: "/tmp/k",
      CONFORMANCE_RESULTS: "/tmp/r",
    });
    // the nested run's setup reads it with the parser plan and run use: the existing provider takes no version or
    // profile of its own, and none is passed on
    const inputs = parseRunInputs({}, env);
    expect([inputs.provider, inputs.mode, inputs.cilium, inputs.profile, inputs.upgradeTo]).toEqual([
      "existing",
      "kpr",
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("the nested run probes from outside with the calling run's client, found by its label's cluster (issue 42)", () => {
    const env = nestedEnv(
      { PATH: "/usr/bin", OUTSIDE_CONTAINER: "set-by-the-user" },
      {
        mode: "kpr",
        label: "after-upgrade",
        kubeconfig: "/tmp/k",
        results: "/tmp/r",
        outside: "eager_turing",
      },
    );
    expect(env.OUTSIDE_CONTAINER).toBe("eager_turing");
    const ps = "tender_lamport cdc-kube-proxy\neager_turing cdc-kpr\n";
    expect(outsideOf(ps, "kind-cdc-kpr")).toBe("eager_turing");
    expect(outsideOf(ps, "kind-cdc-kube-proxy")).toBe("tender_lamport");
    expect(outsideOf(ps, "kind-other")).toBeNull();
    expect(outsideOf("", "kind-cdc-kpr")).toBeNull();
  });
});
