/** The leftovers script against a scripted machine and cluster (outputs written by us). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import { type LeftoversIo, leftovers } from "./leftovers.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-leftovers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function machine(state: { kind: string; lease: boolean; objects?: unknown[] }): Executor {
  const ok = (stdout: string): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
  return {
    run: async (req: ExecRequest) => {
      const cmd = req.argv.join(" ");
      if (cmd.endsWith("get namespaces -o json") || cmd.endsWith("get pods -A -o json"))
        return ok('{"items":[]}');
      if (cmd.includes("get lease"))
        return ok(
          state.lease ? '{"spec":{"holderIdentity":"r1","renewTime":"x","leaseDurationSeconds":600}}' : "",
        );
      if (cmd.includes("configmap cilium-config")) return ok('{"data":{}}');
      if (cmd.includes("ciliumidentities") || cmd.includes("ciliumendpoints")) return ok('{"items":[]}');
      if (cmd === "kind get clusters") return ok(state.kind);
      if (cmd.startsWith("docker ps") || cmd.startsWith("docker network") || cmd === "ip netns list")
        return ok("");
      if (cmd === "ls -1 /sys/fs/bpf") return ok("");
      if (cmd.endsWith("api-resources --verbs=list -o name")) return ok("namespaces\nconfigmaps\n");
      if (cmd.includes(" get namespaces,configmaps -A -o json"))
        return ok(JSON.stringify({ items: state.objects ?? [] }));
      throw new Error(`scripted: ${cmd}`);
    },
  };
}

function io(exec: Executor): LeftoversIo & { text: () => string; errs: () => string } {
  let out = "";
  let err = "";
  return {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
    exec,
    now: () => new Date("2026-12-02T10:00:00Z"),
    text: () => out,
    errs: () => err,
  };
}

describe("npm run leftovers", () => {
  it("saves an inventory, then compares: exit 1 naming what the suite left; a kept cluster is expected, its Lease is not", async () => {
    const before = join(dir, "before.json");
    expect(
      await leftovers(
        ["--context", "kind-cdc-kpr", "--save", before],
        io(machine({ kind: "", lease: false })),
      ),
    ).toBe(0);
    expect(JSON.parse(readFileSync(before, "utf8")).items).toEqual([]);
    const left = io(machine({ kind: "cdc-kpr\n", lease: true }));
    expect(await leftovers(["--context", "kind-cdc-kpr", "--before", before], left)).toBe(1);
    expect(left.text()).toMatch(
      /^left by the suite \(2\):\n {2}Lease default\/cilium-datapath-conformance — held by r1.*\n {2}kind cluster cdc-kpr/,
    );
    const kept = io(machine({ kind: "cdc-kpr\n", lease: false }));
    expect(
      await leftovers(["--context", "kind-cdc-kpr", "--before", before, "--expect-kept", "cdc-kpr"], kept),
    ).toBe(0);
    const keptLease = io(machine({ kind: "cdc-kpr\n", lease: true }));
    expect(
      await leftovers(
        ["--context", "kind-cdc-kpr", "--before", before, "--expect-kept", "cdc-kpr"],
        keptLease,
      ),
    ).toBe(1);
  });

  it("objects: every object by name, compared and classified", async () => {
    const before = join(dir, "objects.json");
    const ns = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    await leftovers(
      ["objects", "--context", "ctx", "--save", before],
      io(machine({ kind: "", lease: false, objects: [ns("default")] })),
    );
    const after = io(machine({ kind: "", lease: false, objects: [ns("default"), ns("cca-dp-r1")] }));
    expect(await leftovers(["objects", "--context", "ctx", "--before", before], after)).toBe(1);
    expect(after.text()).toContain("| added | `Namespace cca-dp-r1` | ours | the run namespace |");
    const same = io(machine({ kind: "", lease: false, objects: [ns("default")] }));
    expect(await leftovers(["objects", "--context", "ctx", "--before", before], same)).toBe(0);
    expect(same.text()).toMatch(/^\*\*clean\*\*: 1 objects before/);
  });

  it("bad input: one line each", async () => {
    const m = io(machine({ kind: "", lease: false }));
    await expect(leftovers(["--bogus"], m)).rejects.toThrow(
      /^Unknown option '--bogus'; valid: --context VALUE, --save VALUE/,
    );
    await expect(leftovers(["--context"], m)).rejects.toThrow(
      /^Option '--context <value>' argument missing; valid: /,
    );
    await expect(leftovers(["objects"], m)).rejects.toThrow("objects: which cluster? --context CTX");
    await expect(leftovers(["list"], m)).rejects.toThrow("the only subcommand is `objects`");
    const notJson = join(dir, "x.txt");
    writeFileSync(notJson, "hello");
    await expect(leftovers(["--before", notJson, "--no-host"], m)).rejects.toThrow(
      /not an inventory saved by this tool \(not JSON\)$/,
    );
    await expect(leftovers(["--before", join(dir, "missing.json"), "--no-host"], m)).rejects.toThrow(
      /cannot read it \(ENOENT\)/,
    );
  });
});
