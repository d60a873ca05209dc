/**
 * The existing-provider drivers end to end with FAKE CHILDREN WRITTEN BY US (node programs printing what the
 * suite prints) and a scripted kubectl/docker: the before/after comparison of every object, the teardown report
 * picked up from the bundle, and two runs competing for the Lease.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalExecutor } from "../../helpers/exec/local.ts";
import type { ExecRequest, ExecResult, Executor } from "../../helpers/exec/types.ts";
import { type ExistingOptions, runConcurrent, runExisting } from "./existing.ts";

const root = mkdtempSync(join(tmpdir(), "dpc-existing-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A cluster whose objects are `objects()` at each read, and whose Lease holder is `holder()`. */
function cluster(objects: () => unknown[], holder: () => string = () => ""): Executor {
  const real = new LocalExecutor();
  return {
    run: async (req: ExecRequest): Promise<ExecResult> => {
      const cmd = req.argv.join(" ");
      const ok = (stdout: string): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
      if (req.argv[0] === "ps") return real.run(req);
      if (cmd.endsWith("api-resources --verbs=list -o name"))
        return ok("namespaces\nleases.coordination.k8s.io\n");
      if (cmd.includes("get namespaces,leases.coordination.k8s.io -A -o json"))
        return ok(JSON.stringify({ items: objects() }));
      if (cmd.includes("jsonpath={.spec.holderIdentity}")) return ok(holder());
      if (cmd.endsWith("get namespaces -o json") || cmd.endsWith("get pods -A -o json"))
        return ok('{"items":[]}');
      if (cmd.includes("get lease cilium-datapath-conformance -o json")) return ok("");
      if (cmd.includes("configmap cilium-config")) return ok('{"data":{}}');
      if (cmd.includes("ciliumidentities") || cmd.includes("ciliumendpoints")) return ok('{"items":[]}');
      if (
        cmd === "kind get clusters" ||
        cmd.startsWith("docker") ||
        cmd === "ip netns list" ||
        cmd === "ls -1 /sys/fs/bpf"
      )
        return ok("");
      throw new Error(`scripted cluster: ${cmd}`);
    },
  };
}

const fakeRun = (body: string) => {
  const file = join(root, `fake-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(file, `const say = (l) => process.stdout.write(l + "\\n");\n${body}\n`);
  return () => [process.execPath, file];
};

function options(over: Partial<ExistingOptions>): ExistingOptions & { lines: string[] } {
  const lines: string[] = [];
  return {
    context: "kind-cdc-kpr",
    id: "ex1",
    resultsDir: join(root, "results", "existing"),
    root,
    labImages: true,
    filters: [],
    runS: 30,
    exec: cluster(() => []),
    log: (l) => lines.push(l),
    kubeconfig: () => ({ file: join(root, "kubeconfig"), remove: () => {} }),
    leasePollMs: 50,
    lines,
    ...over,
  };
}

const ns = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

describe("the existing provider, driven", { timeout: 60_000 }, () => {
  it("a clean run: mode detected, every object compared by name, the run's teardown report picked up", async () => {
    mkdirSync(join(root, "results", "ex1", "kpr"), { recursive: true });
    writeFileSync(
      join(root, "results", "ex1", "kpr", "teardown.json"),
      JSON.stringify({ namespace: "cca-dp-ex1", namespaceGone: true }),
    );
    const o = options({
      exec: cluster(() => [ns("default"), ns("kube-system")]),
      runArgv: fakeRun(
        `say("[conformance] mode kpr: the agents report KubeProxyReplacement True (Cilium 1.19.7)"); require("fs").appendFileSync(process.env.FAULT_REPORT_FILE, JSON.stringify({event:"test",at:Date.now(),state:"passed",name:"iptables.kpr-mode"})+"\\n");`,
      ),
    });
    const r = await runExisting(o);
    expect(r.clean).toBe(true);
    const md = readFileSync(join(r.dir, "comparison.md"), "utf8");
    expect(md).toContain(
      "context kind-cdc-kpr, mode kpr (detected from the agents), exit 0, 1 passed, 0 failed, 0 skipped",
    );
    expect(md).toContain('"namespaceGone":true');
    expect(md).toContain("**clean**: 2 objects before");
    expect(o.lines.some((l) => l.startsWith("clean: **clean**"))).toBe(true);
  });

  it("a run that leaves its namespace is not clean, and says what", async () => {
    let reads = 0;
    const o = options({
      id: "ex2",
      exec: cluster(() => (reads++ === 0 ? [ns("default")] : [ns("default"), ns("cca-dp-ex2")])),
      runArgv: fakeRun(
        `say("[conformance] mode kube-proxy: the agents report KubeProxyReplacement False (Cilium 1.19.7)");`,
      ),
    });
    const r = await runExisting(o);
    expect(r.clean).toBe(false);
    expect(readFileSync(join(r.dir, "comparison.md"), "utf8")).toContain(
      "| added | `Namespace cca-dp-ex2` | ours | the run namespace |",
    );
  });

  it("two runs at once: the second is refused naming the first; the Lease had one holder; both ended", async () => {
    let holder = "";
    const o = options({
      id: "cc1",
      resultsDir: join(root, "results", "concurrent"),
      exec: cluster(
        () => [ns("default")],
        () => holder,
      ),
      runArgv: (runId) =>
        runId.endsWith("-a")
          ? fakeRun(
              `say("[conformance] mode kpr: the agents report KubeProxyReplacement True"); setTimeout(() => process.exit(0), 800);`,
            )()
          : fakeRun(
              `say("Error: another run (cc1-a) holds Lease default/cilium-datapath-conformance until 2026-12-02T10:10:00.000Z; wait for it (LEASE_WAIT_S=<seconds> waits)"); process.exit(1);`,
            )(),
    });
    holder = "cc1-a";
    setTimeout(() => {
      holder = "";
    }, 700);
    const r = await runConcurrent({ ...o, leaseWaitS: 0, staggerS: 0 });
    const summary = JSON.parse(readFileSync(join(r.dir, "summary.json"), "utf8"));
    expect(summary).toMatchObject({ held: true, winner: "cc1-a", loser: "cc1-b", violations: [] });
    expect(summary.timeline.map((t: { holder: string }) => t.holder)).toEqual(["cc1-a", "(none)"]);
    expect(r.held).toBe(true);
  });
});
