import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CILIUM_MINORS, CILIUM_PATCHES } from "../clusters/versions.ts";
import { ALL_COMMANDS } from "./commands.ts";
import { main } from "./main.ts";
import type { Command } from "./registry.ts";
import { runCli as run } from "./run-in-process.ts";

describe("datapath-conformance CLI", () => {
  it("parse reads stdin and prints JSON", async () => {
    const r = await run(["parse", "ss", "-"], "LISTEN 0 128 0.0.0.0:30780 0.0.0.0:*\n");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).sockets[0].local).toBe("0.0.0.0:30780");
  });

  it("parse says on stderr what it passed over: elided lines skipped and counted, unknown keywords kept", async () => {
    const r = await run(
      ["parse", "ip-route", "-"],
      "default nhid 12 via 192.168.1.1 dev eth0 quantum_flux 7\n...\n10.0.2.0/24 dev eth0 scope link\n",
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).routes[0].extra).toEqual({ nhid: "12", quantum_flux: "7" });
    expect(r.err).toBe(
      'ip-route: skipped 1 elided line (line 2)\nip-route: line 1: kept unknown keyword "quantum_flux" in extra: "quantum_flux 7"\n',
    );
  });

  it("unknown format: exit 2, one line listing the formats", async () => {
    const r = await run(["parse", "nope"]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/unknown format "nope"; valid: service-list, .*curl/);
  });

  it("unparseable input: exit 2, one line with format, line number and text", async () => {
    const r = await run(
      ["parse", "bpf-ct-list"],
      "TCP OUT 1.2.3.4:1 -> 5.6.7.8:2 expires=1 Packets=0 Bytes=0 Flags=0x0 [ ] RevNAT=0 SourceSecurityID=0\nwhat is this\n",
    );
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'datapath-conformance parse: bpf-ct-list: line 2: expected `PROTO OUT|IN|SVC SRC -> DST expires=…`: "what is this"\n',
    );
  });

  it("a cut-off last line the format cannot tell: exit 0, the record kept, a warning on stderr and in the result", async () => {
    const r = await run(
      ["parse", "bpf-lb-backends", "-"],
      "ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n13   TCP://10.244.1.17",
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      backends: [{ id: 13, address: "10.244.1.17" }],
      parseWarnings: [
        { line: 2, reason: expect.stringMatching(/may be cut off/), text: "13   TCP://10.244.1.17" },
      ],
    });
    expect(r.err).toBe(
      'bpf-lb-backends: warning: line 2: the output ends on this line without a newline: it may be cut off: "13   TCP://10.244.1.17"\n',
    );
    // the same line with its newline is clean
    const whole = await run(["parse", "bpf-lb-backends", "-"], "13   TCP://10.244.1.174\n");
    expect([whole.code, whole.err, JSON.parse(whole.out).parseWarnings]).toEqual([0, "", undefined]);
  });

  it("a cut-off line, two lines joined, binary data: exit 2, one line naming the line", async () => {
    const cut = await run(
      ["parse", "netstat", "-"],
      "Proto Recv-Q Send-Q Local Address           Foreign Address         State\ntcp        0      0 10.244.1.5:40404        10.244.1.1",
    );
    expect([cut.code, cut.err]).toEqual([
      2,
      'datapath-conformance parse: netstat: line 2: foreign address "10.244.1.1" is not ADDRESS:PORT: "tcp        0      0 10.244.1.5:40404        10.244.1.1"\n',
    ]);
    const entry =
      "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 BackendID=3 NatPort=0 ";
    const joined = await run(["parse", "bpf-ct-list", "-"], `${entry}\n${entry}${entry}\n`);
    expect(joined.code).toBe(2);
    expect(joined.err).toMatch(
      /^datapath-conformance parse: bpf-ct-list: line 2: unexpected "TCP": two entries on one line\?/,
    );
    const header = await run(
      ["parse", "map-list", "-"],
      "Name                       Num entries   Num errors   Cache enabledcilium_lb4_reverse_sk      1             0            true\n",
    );
    expect([header.code, header.err.split(": ").slice(1, 3)]).toEqual([2, ["map-list", "line 1"]]);
    const binary = await run(
      ["parse", "ip-route", "-"],
      "default via 10.0.0.1 dev eth0\n\u0000\u0001\u0002\u0003\n",
    );
    expect(binary.err).toBe(
      'datapath-conformance parse: ip-route: line 2: binary data (0x00) at column 1: "\\u0000\\u0001\\u0002\\u0003"\n',
    );
    const as = await run(["parse", "config", "-"], `${"A".repeat(100)}\n`);
    expect([as.code, as.err]).toEqual([
      2,
      expect.stringMatching(/^datapath-conformance parse: config: line 1: expected `Name : value`/),
    ]);
  });

  it("parse --ndjson streams one record a line, in chunks that split lines anywhere", async () => {
    const line = (i: number) =>
      `TCP OUT 10.244.1.${i}:40404 -> 10.244.2.9:8080 expires=17013 Packets=${i} Bytes=0 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 IfIndex=0 BackendID=3 `;
    const text = `${[1, 2, 3].map(line).join("\n")}\nwhat is this\n`;
    let out = "";
    const io = {
      out: () => {},
      err: () => {},
      readStdin: async () => "",
      write: async (s: string | Uint8Array) => {
        out += typeof s === "string" ? s : Buffer.from(s).toString("utf8");
      },
      // 7-byte chunks: lines (and a UTF-8 decoder state) are cut mid-way
      stdin: async function* () {
        for (let i = 0; i < text.length; i += 7) yield Buffer.from(text.slice(i, i + 7));
      },
    };
    const err = (s: string) => {
      out += `ERR ${s}`;
    };
    expect(await main(["parse", "bpf-ct-list", "-", "--ndjson"], { ...io, err })).toBe(2);
    const rows = out.trim().split("\n");
    expect(rows.slice(0, 3).map((l) => JSON.parse(l).packets)).toEqual([1, 2, 3]);
    // the bad line is named by its line number in the whole stream
    expect(rows[3]).toBe(
      'ERR datapath-conformance parse: bpf-ct-list: line 4: expected `PROTO OUT|IN|SVC SRC -> DST expires=…`: "what is this"',
    );
    expect((await run(["parse", "ss", "-", "--ndjson"])).err).toMatch(
      /--ndjson streams the line-per-record formats \(bpf-ct-list\)/,
    );
  });

  it("parse --ndjson: a last entry without a newline is streamed, and doubted on stderr", async () => {
    const entry =
      "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 BackendID=3";
    let out = "";
    let err = "";
    const io = {
      out: () => {},
      err: (s: string) => {
        err += s;
      },
      readStdin: async () => "",
      write: async (s: string | Uint8Array) => {
        out += typeof s === "string" ? s : Buffer.from(s).toString("utf8");
      },
      stdin: async function* () {
        yield Buffer.from(`${entry}\n${entry}`);
      },
    };
    expect(await main(["parse", "bpf-ct-list", "-", "--ndjson"], io)).toBe(0);
    expect(out.trim().split("\n")).toHaveLength(2);
    expect(err).toMatch(
      /^bpf-ct-list: warning: line 2: the output ends on this line without a newline: it may be cut off/,
    );
  });

  it("parse --transcript strips prompts and fences", async () => {
    const r = await run(
      ["parse", "tc-filter", "--transcript"],
      "```\nroot@kind:/# tc filter show dev lxc1 ingress\n```\n",
    );
    expect(JSON.parse(r.out)).toEqual({ filters: [], lineCount: 0 });
  });

  it("missing file is a one-line error", async () => {
    const r = await run(["parse", "ss", "/nonexistent/file"]);
    expect(r).toMatchObject({
      code: 2,
      err: "datapath-conformance parse: cannot read /nonexistent/file: ENOENT\n",
    });
  });

  it("expectations: markdown for both modes, json per mode and minor, bad values rejected", async () => {
    const md = await run(["expectations", "--format", "md"]);
    expect(md.out).toContain("| `iptables.kpr-mode` |");
    // an IP-family pair, named from both sides
    expect(md.out).toContain("| `iptables.kube-svc-lines` (IPv6 twin: `ipv6.kube-proxy-rules`) |");
    expect(md.out).toContain("| `ipv6.kube-proxy-rules` (IPv6 twin of `iptables.kube-svc-lines`) |");
    expect(md.out).toContain("`kpr` | `kube-proxy`");
    // on a terminal by default: plain text, values as they are (no markdown escape)
    const text = (await run(["expectations"])).out;
    expect(text).toMatch(/^iptables\.kpr-mode: .*\n {2}kpr: .*\n {2}kube-proxy: /m);
    expect(text).toMatch(
      /^ipv6\.ghost-errno \(IPv6 twin of ghost\.errno\): (.*\n {2})+family: parts from the IPv4 twin in kpr and kube-proxy: /m,
    );
    expect(text).toContain("/^translated by kube-proxy \\((iptables|nftables)\\): kube-system/kube-dns/");
    expect(text).not.toMatch(/\\\||&lt;|&gt;|&amp;/);
    const json = JSON.parse(
      (await run(["expectations", "--mode", "kube-proxy", "--cilium", "1.18", "--format", "json"])).out,
    );
    expect(json.find((r: { id: string }) => r.id === "ghost.wildcard-entry").expected).toEqual({
      "kube-proxy": "false",
    });
    expect((await run(["expectations", "--cilium", "latest"])).err).toContain(
      'unsupported Cilium version "latest"; valid: 1.18, 1.19, 1.20',
    );
  });

  it("unknown command lists the commands; no command prints usage with exit 2", async () => {
    expect((await run(["frobnicate"])).err).toMatch(
      /unknown command "frobnicate"; valid: parse, formats, expectations/,
    );
    expect((await run([])).code).toBe(2);
  });

  it("every command and subcommand answers --help and -h with its own usage, exit 0", async () => {
    const paths: [string[], Command][] = ALL_COMMANDS.flatMap((c) => [
      [[c.name], c] as [string[], Command],
      ...(c.subcommands ?? []).map((s) => [[c.name, s.name], s] as [string[], Command]),
    ]);
    expect(paths.map(([p]) => p.join(" "))).toEqual(
      expect.arrayContaining(["parse", "check", "compare", "report", "lab run", "lab images"]),
    );
    for (const [path, cmd] of paths)
      for (const flag of ["--help", "-h"]) {
        const r = await run([...path, flag]);
        expect(r, `${path.join(" ")} ${flag}`).toMatchObject({ code: 0, err: "" });
        expect(r.out.split("\n")[0]).toBe(
          `usage: datapath-conformance ${path.join(" ")}${cmd.synopsis ? ` ${cmd.synopsis}` : ""}`,
        );
        expect(r.out).toContain(cmd.summary);
        for (const name of Object.keys(cmd.options ?? {})) expect(r.out).toContain(`--${name}`);
      }
    // help wins over what else is on the line; `help CMD` is the same page
    expect((await run(["parse", "nope", "--ndjson", "--help"])).code).toBe(0);
    expect((await run(["help", "check"])).out).toBe((await run(["check", "--help"])).out);
    const top = await run(["--help"]);
    expect(top.code).toBe(0);
    for (const c of ALL_COMMANDS) expect(top.out).toContain(`  ${c.name}`);
  });

  it("--version prints the suite's version and the Cilium versions it declares", async () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const r = await run([flag]);
      expect(r.code).toBe(0);
      expect(r.out.split("\n")[0]).toBe(`datapath-conformance ${pkg.version} (cilium-datapath-conformance)`);
      for (const m of CILIUM_MINORS) expect(r.out).toContain(`${m} → ${CILIUM_PATCHES[m]}`);
      expect(r.out).toMatch(/offline lab \(LAB_IMAGES=1\): builds Cilium \d+\.\d+\.\d+/);
    }
  });

  it("bad arguments: one line naming the problem, exit 2", async () => {
    const cases: [string[], string][] = [
      [
        ["check", "--frob", "x"],
        "datapath-conformance check: unknown option --frob; valid: --markdown, --strict, --no-nearest, --junit, --help/-h",
      ],
      [["check", "--markdown=yes", "x"], "datapath-conformance check: --markdown takes no value"],
      [
        ["expectations", "--mode"],
        "datapath-conformance expectations: --mode needs a value (kpr|kube-proxy)",
      ],
      [
        ["expectations", "--mode", "--format", "md"],
        "datapath-conformance expectations: --mode needs a value (kpr|kube-proxy)",
      ],
      [
        ["expectations", "--mode", "ipvs"],
        'datapath-conformance expectations: unknown mode "ipvs"; valid: kpr, kube-proxy',
      ],
      [["formats", "extra"], 'datapath-conformance formats: unexpected argument "extra" (usage: formats)'],
      [
        ["compare", "a", "b", "c"],
        'datapath-conformance compare: unexpected argument "c" (usage: compare BUNDLE_A BUNDLE_B [--markdown])',
      ],
      [["compare", "a"], "datapath-conformance compare: needs two bundles: compare BUNDLE_A BUNDLE_B"],
      [
        ["report", "--compare", "a"],
        "datapath-conformance report: --compare needs two values: --compare A B",
      ],
      [
        ["report", "/nonexistent"],
        "datapath-conformance report: /nonexistent is not an evidence bundle (no such folder)",
      ],
      [["lab"], "datapath-conformance lab: which one? valid: run, images, up, down, status (lab --help)"],
      [
        ["lab", "frob"],
        'datapath-conformance lab: unknown subcommand "frob"; valid: run, images, up, down, status',
      ],
      [
        ["lab", "run", "--mode", "ipvs", "--dry-run"],
        'datapath-conformance lab run: unknown mode "ipvs"; valid: kpr, kube-proxy',
      ],
    ];
    for (const [argv, line] of cases) {
      const r = await run(argv);
      expect(r, argv.join(" ")).toMatchObject({ code: 2, out: "", err: `${line}\n` });
    }
  });

  it("an option's value may be given after = and a file may be -", async () => {
    const r = await run(["expectations", "--mode=kpr", "--format=json"]);
    expect(JSON.parse(r.out)[0].expected).toHaveProperty("kpr");
    expect((await run(["parse", "ss", "-"], "LISTEN 0 128 0.0.0.0:1 0.0.0.0:*\n")).code).toBe(0);
  });
});

describe("a terminal gets text, a step summary markdown (--markdown)", { timeout: 120_000 }, () => {
  /** What markdown escapes a value with: entities, backslashes before its punctuation. */
  const ESCAPES = /&lt;|&gt;|&amp;|&#\d+;|\\[[\]|_*`<>#]/;
  const B = "suites/bundles";

  it("compare: cilium_policy_v3_<id:05> as it is; --markdown: the markdown document", async () => {
    const text = await run(["compare", `${B}/1.19/kpr`, `${B}/1.20/kpr`]);
    expect(text.code).toBe(1);
    expect(text.out).toContain("cilium_policy_v3_<id:05>");
    expect(text.out).not.toMatch(ESCAPES);
    expect(text.out).not.toMatch(/^#|^\|/m);
    const md = await run(["compare", `${B}/1.19/kpr`, `${B}/1.20/kpr`, "--markdown"]);
    expect(md.code).toBe(1);
    expect(md.out).toMatch(/^### Compare /);
    expect(md.out).toContain("cilium_policy_v3_&lt;id:05&gt;");
  });

  it("upgrade: the headline first, the legs as aligned text; --markdown: the step summary", async () => {
    const text = await run(["upgrade", `${B}/upgrade-1.19-1.20/kpr-2`]);
    expect(text.code).toBe(1);
    expect(text.out).toMatch(
      /^Upgrade Cilium 1\.19\.7 → 1\.20\.2 → 1\.19\.7 \(rollback\), kpr: INCONCLUSIVE/,
    );
    expect(text.out).toMatch(/^ {2}restart 1\.19\.7 → 1\.19\.7 +883 +2 \(0\)/m);
    expect(text.out).not.toMatch(ESCAPES);
    expect(text.out).not.toMatch(/^#|^\|/m);
    const md = await run(["upgrade", `${B}/upgrade-1.19-1.20/kpr-2`, "--markdown"]);
    expect(md.out).toMatch(/^### Upgrade Cilium /);
    expect(md.out).toContain("#### The legs");
  });

  it("summary: aligned tables; --markdown: the markdown tables", async () => {
    const text = await run(["summary", `${B}/1.20`]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/^Measurements\n\n {2}bundle +mode +Cilium +kube-proxy lines \/ Service/);
    expect(text.out).not.toMatch(/^\||^#/m);
    const md = await run(["summary", `${B}/1.20`, "--markdown"]);
    expect(md.out).toMatch(/^### Measurements\n\n\| bundle \| mode \| Cilium \|/);
  });

  it("no other command prints a markdown escape on a terminal", async () => {
    for (const argv of [
      ["check", `${B}/1.20`],
      ["expectations"],
      ["summary", `${B}/1.20`],
      ["declare-minor", `${B}/1.20/kpr`],
      ["plan"],
    ]) {
      const r = await run(argv);
      expect(`${r.out}${r.err}`, argv.join(" ")).not.toMatch(ESCAPES);
    }
  });
});

describe("plan's words are ones a reader can open", { timeout: 120_000 }, () => {
  it("no internal run id (lab-20261206-011154) unless it is the run of a shipped bundle", async () => {
    const { SHIPPED_BUNDLES } = await import("../suites/environment.ts");
    const { readMeta } = await import("../helpers/bundle/read.ts");
    const shipped = new Set(SHIPPED_BUNDLES.map((d) => readMeta(d).runId));
    const ids = new Set<string>();
    for (const argv of [
      [],
      ["--provider", "k3d"],
      ["--provider", "existing"],
      ["--provider", "replay"],
      ["--profile", "dual-stack"],
      ["--profile", "kp-nftables"],
      ["--cilium", "1.18", "--upgrade-to", "1.19", "--rollback"],
    ]) {
      const r = await run(["plan", ...argv]);
      expect(r.code, r.err).toBe(0);
      for (const m of r.out.matchAll(/\b(?:lab|up)-[a-z0-9.]+(?:-[a-z0-9.]+)*/g)) ids.add(m[0]);
    }
    for (const id of ids)
      expect(shipped, `plan names the run ${id}, which no shipped bundle is`).toContain(id);
  });
});
