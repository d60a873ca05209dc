/**
 * A real BPF program (helpers/kernel/bpf/cil_prog.c, named like Cilium's cil_from_container) attached to
 * lab veth devices with legacy tc (cls_bpf on clsact) and with tcx, and what `tc filter show` and this
 * machine's bpftool see in each case. Everything is removed afterwards (pins, qdiscs, namespaces).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalExecutor } from "../exec/local.ts";
import { parseBpftoolNet, parseBpftoolNetJson } from "../parse/bpftool-net.ts";
import { parseTcFilter } from "../parse/tc-filter.ts";
import { attachmentVerdict, bpftoolVersion, tcxLinkCount } from "../records/attach.ts";
import { NetnsLab } from "./netns-lab.ts";

const why =
  NetnsLab.unavailable(["ip", "tc", "bpftool", "clang", "gcc"]) ??
  (existsSync("/usr/include/bpf/libbpf.h") ? null : "missing libbpf-dev headers");
const SRC = join(import.meta.dirname, "bpf");

describe.skipIf(why !== null)(`tc vs tcx on the real kernel${why ? ` (skipped: ${why})` : ""}`, () => {
  let lab: NetnsLab;
  let build: string;
  let pin: string;
  let mountedBpffs = false;
  const local = new LocalExecutor();
  const sh = async (argv: string[]) => {
    const r = await local.run({ target: { kind: "local" }, argv });
    if (r.exitCode !== 0) throw new Error(`\`${argv.join(" ")}\` exited ${r.exitCode}: ${r.stderr.trim()}`);
    return r.stdout;
  };

  beforeAll(async () => {
    build = mkdtempSync(join(tmpdir(), "dpc-bpf-"));
    await sh([
      "clang",
      "-O2",
      "-g",
      "-target",
      "bpf",
      "-I/usr/include/x86_64-linux-gnu",
      "-c",
      join(SRC, "cil_prog.c"),
      "-o",
      join(build, "cil_prog.o"),
    ]);
    await sh(["gcc", "-O2", "-o", join(build, "tcx_attach"), join(SRC, "tcx_attach.c"), "-lbpf"]);
    if (
      (await local.run({ target: { kind: "local" }, argv: ["mountpoint", "-q", "/sys/fs/bpf"] })).exitCode !==
      0
    ) {
      mkdirSync("/sys/fs/bpf", { recursive: true });
      await sh(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"]);
      mountedBpffs = true;
    }
    lab = await NetnsLab.create();
    pin = `/sys/fs/bpf/dpc-tcx-${lab.id}`;
    // legacy tc on b's device, tcx on a's device
    await lab.must(lab.b, ["tc", "qdisc", "add", "dev", lab.devB, "clsact"]);
    await lab.must(lab.b, [
      "tc",
      "filter",
      "add",
      "dev",
      lab.devB,
      "ingress",
      "bpf",
      "da",
      "obj",
      join(build, "cil_prog.o"),
      "sec",
      "tc",
    ]);
    await sh([join(build, "tcx_attach"), join(build, "cil_prog.o"), lab.a, lab.devA, pin]);
  });

  afterAll(async () => {
    if (pin) rmSync(pin, { force: true });
    await lab?.destroy();
    if (mountedBpffs) await local.run({ target: { kind: "local" }, argv: ["umount", "/sys/fs/bpf"] });
    if (build) rmSync(build, { recursive: true, force: true });
  });

  it("legacy tc: tc filter show prints the two-line cls_bpf filter; bpftool lists clsact/ingress", async () => {
    const tcRaw = (await lab.must(lab.b, ["tc", "filter", "show", "dev", lab.devB, "ingress"])).stdout;
    const tc = parseTcFilter(tcRaw);
    expect(tc.lineCount).toBe(2);
    expect(tc.filters[0]).toMatchObject({
      kind: "bpf",
      directAction: true,
      name: "cil_prog.o:[tc]",
      progName: "cil_from_contai",
    });
    const net = parseBpftoolNet((await lab.must(lab.b, ["bpftool", "net", "show", "dev", lab.devB])).stdout);
    expect(net.attachments).toEqual([
      expect.objectContaining({
        device: lab.devB,
        attach: "clsact/ingress",
        kind: "tc",
        rawName: "cil_prog.o:[tc]",
        progId: tc.filters[0]?.progId,
      }),
    ]);
    const json = parseBpftoolNetJson(
      (await lab.must(lab.b, ["bpftool", "-j", "net", "show", "dev", lab.devB])).stdout,
    );
    expect(json.attachments[0]).toMatchObject({ attach: "clsact/ingress", progId: tc.filters[0]?.progId });
    const ver = bpftoolVersion((await lab.must(lab.b, ["bpftool", "version"])).stdout);
    expect(attachmentVerdict({ device: lab.devB, bpftoolVersion: ver, net, tcFilter: tc })).toMatchObject({
      seen: "tc",
      attach: "clsact/ingress",
    });
  });

  it("the kernel keeps the full program name (BTF), tc shows it cut to 15 characters", async () => {
    const tc = parseTcFilter(
      (await lab.must(lab.b, ["tc", "filter", "show", "dev", lab.devB, "ingress"])).stdout,
    );
    const prog = await sh(["bpftool", "prog", "show", "id", String(tc.filters[0]?.progId)]);
    expect(prog).toContain("name cil_from_container");
  });

  it("tcx: tc filter show prints nothing; what bpftool shows depends on its version, and the verdict says so", async () => {
    const tcRaw = (await lab.must(lab.a, ["tc", "filter", "show", "dev", lab.devA, "ingress"])).stdout;
    expect(tcRaw).toBe("");
    const tc = parseTcFilter(tcRaw);
    const ver = bpftoolVersion((await lab.must(lab.a, ["bpftool", "version"])).stdout);
    const net = parseBpftoolNet((await lab.must(lab.a, ["bpftool", "net", "show", "dev", lab.devA])).stdout);
    const links = tcxLinkCount(await sh(["bpftool", "link", "show"]));
    expect(links).toBeGreaterThanOrEqual(1);
    const verdict = attachmentVerdict({
      device: lab.devA,
      bpftoolVersion: ver,
      net,
      tcFilter: tc,
      tcxLinks: links,
    });
    if (net.attachments.length === 0) {
      // Debian 12's bpftool 7.1: blind to tcx. The verdict must not claim "no program".
      expect(ver && Number(ver.split(".")[1]) < 3 && ver.startsWith("7.")).toBe(true);
      expect(verdict.seen).toBe("unknown");
      expect(verdict.message).toMatch(/cannot show tcx attachments.*tcx link/);
    } else {
      expect(verdict).toMatchObject({ seen: "tcx", attach: "tcx/ingress", program: "cil_from_container" });
    }
  });

  it("the tcx program really runs on packets (its counter moves), while tc saw nothing", async () => {
    // the tcx link's program and its map, found from the pinned link
    const link = JSON.parse(await sh(["bpftool", "-j", "link", "show", "pinned", pin])) as {
      prog_id: number;
    };
    const prog = JSON.parse(await sh(["bpftool", "-j", "prog", "show", "id", String(link.prog_id)])) as {
      map_ids: number[];
    };
    const count = async () => {
      const out = JSON.parse(await sh(["bpftool", "-j", "map", "dump", "id", String(prog.map_ids[0])])) as {
        formatted?: { value: number };
      }[];
      return out[0]?.formatted?.value ?? -1;
    };
    const before = await count();
    // packets into a's device (a SYN to a closed port comes back as RST: traffic stays in the lab)
    await lab.run(lab.b, ["curl", "-sS", "--max-time", "2", `http://${lab.ipA}:9/`]);
    expect(await count()).toBeGreaterThan(before);
  });
});
