import { describe, expect, it } from "vitest";
import { main } from "./main.ts";

function run(argv: string[], stdin = "") {
  let out = "";
  let err = "";
  const io = {
    out: (s: string) => {
      out += s;
    },
    err: (s: string) => {
      err += s;
    },
    readStdin: async () => stdin,
  };
  return main(argv, io).then((code) => ({ code, out, err }));
}

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
      "TCP OUT 1.2.3.4:1 -> 5.6.7.8:2 expires=1 RevNAT=0\nwhat is this\n",
    );
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'datapath-conformance parse: bpf-ct-list: line 2: expected `PROTO OUT|IN|SVC SRC -> DST expires=…`: "what is this"\n',
    );
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
    const md = await run(["expectations"]);
    expect(md.out).toContain("| `iptables.kube-svc-lines` |");
    expect(md.out).toContain("`kpr` | `kube-proxy`");
    const json = JSON.parse(
      (await run(["expectations", "--mode", "kube-proxy", "--cilium", "1.18", "--format", "json"])).out,
    );
    expect(json.find((r: { id: string }) => r.id === "ghost.wildcard-entry").expected).toEqual({
      "kube-proxy": "false",
    });
    expect((await run(["expectations", "--cilium", "latest"])).err).toContain(
      "--cilium takes a minor such as 1.20",
    );
  });

  it("unknown command lists the commands; no command prints usage with exit 2", async () => {
    expect((await run(["frobnicate"])).err).toMatch(
      /unknown command "frobnicate"; valid: parse, formats, expectations/,
    );
    expect((await run([])).code).toBe(2);
  });
});
