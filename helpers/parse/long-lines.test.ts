/**
 * No parser is worse than linear on a long line (issue 26: a 1 MB line took 10 s in one regex of bpf-ct-list.ts).
 * Every text format gets 1 MB lines of the shapes that make a backtracking regex blow up — a run of spaces or tabs
 * before a character that fails the match (`/\s+$/` is quadratic on it), a run of `#` — and a line of its own
 * output joined a few thousand times over (written by us, in each tool's layout); every JSON format a document
 * nested a million deep. Each parse, refused or not, must end in a result or a ParseError, in under a second
 * (the best of three when the first is slower: a busy machine slows one parse, a quadratic regex every one).
 */
import { describe, expect, it } from "vitest";
import { ParseError, UserError } from "../errors.ts";
import { FORMATS } from "./index.ts";

const MB = 1 << 20;
const fill = (unit: string, tail = "") => unit.repeat(Math.ceil(MB / unit.length)) + tail;

/** The shapes that blow up a backtracking regex (each is where one of these parsers had one). */
const SHAPES: Record<string, string> = {
  // `/\s+$/`, `\s*(.*?)\s*$`, `^(\S[^:]*?)\s*:`: quadratic on a long run of white space that ends in a non-space
  "spaces, then x": `a${fill(" ", "x")}`,
  "tabs, then x": `a${fill("\t", "x")}`,
  "`Key:   ` repeated": fill("Key:   ", "x"),
  // `^#{3,}\s*(.*?)\s*#{3,}$`, `/#{3,}$/`: quadratic on a run of #
  "`#` run, then x": fill("#", "x"),
};
/** A line of each format's output (written by us in the tool's layout), to repeat into one long line. */
const OWN_LINE: Record<string, string> = {
  "service-list": "6    10.96.44.2:80/TCP     ClusterIP      1 => 10.244.1.7:8080/TCP (active)   ",
  "bpf-lb-list": "10.96.44.2:80/TCP (1)    10.244.1.7:8080/TCP (7) (1)   ",
  "bpf-lb-backends": "13   TCP://10.244.1.174   ",
  "bpf-ct-list":
    "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 BackendID=3 NatPort=0 ",
  status: "KVStore:                 Ok   Disabled   ",
  config: "EnableSocketLB                    : true   ",
  "map-list": "cilium_lb4_reverse_sk      1             0            true   ",
  "bpftool-net": "lxc0a1b2c3(17) tcx/ingress cil_from_container prog_id 4773 link_id 29 ",
  "bpftool-cgroup": "3149     cgroup_inet4_connect multi           cil_sock4_connect   ",
  "bind-probe": "nc: Address already in use ",
  "tc-filter":
    "filter protocol all pref 1 bpf chain 0 handle 0x1 cil_from_container-lxc0a1b2c3 direct-action not_in_hw id 4773 tag 2b6a3bca3f6b4a0c jited ",
  "iptables-save":
    '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -j KUBE-SVC-TCOU7JCQXEZGVUNU ',
  ss: "LISTEN 0      4096         0.0.0.0:10250      0.0.0.0:*   ",
  netstat: "tcp        0      0 10.244.1.5:40404        10.244.2.9:8080         ESTABLISHED ",
  "proc-net-tcp":
    "   0: 0902F40A:1F90 0501F40A:9DD4 01 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 20 4 30 10 -1 ",
  "ip-route": "10.244.1.0/24 via 10.244.2.72 dev cilium_host proto kernel src 10.244.2.72 mtu 1450 ",
  "ip-addr":
    "5: cilium_host    inet 10.244.2.72/32 scope global cilium_host\\       valid_lft forever preferred_lft forever ",
  tcpdump:
    "12:17:46.018029 eth0  Out IP 172.31.100.3.43098 > 172.31.100.2.8472: VXLAN, flags [I] (0x08), vni 56921 ",
  curl: "http_code=200 time_total=0.001234 ",
  "nft-ruleset": "table ip kube-proxy { chain services { ip daddr . meta l4proto . th dport vmap @service-ips } ",
};

/**
 * The JSON formats: nested a million deep around a 16-digit integer (the scanner that keeps such integers exact).
 * Plain JSON.parse on a million `[` (linear, but 0.2–0.4 s) is timed once, for status-json: every JSON format
 * shares that path, and none reaches its own code with a document that does not parse.
 */
const JSON_SHAPES: Record<string, string> = {
  "nested arrays around a 16-digit integer": fill("[", "1234567890123456"),
};
const JSON_ONCE: Record<string, string> = { "status-json": fill("[") };

function once(format: string, text: string): number {
  const parse = FORMATS[format]?.parse as (s: string) => unknown;
  const t0 = performance.now();
  try {
    parse(text);
  } catch (err) {
    if (!(err instanceof ParseError) && !(err instanceof UserError)) throw err;
  }
  return performance.now() - t0;
}

/** The fastest of up to three parses: a quadratic parse is slow every time, a busy machine only now and then. */
function timed(format: string, text: string): number {
  let best = once(format, text);
  for (let k = 0; k < 2 && best >= 1000; k++) best = Math.min(best, once(format, text));
  return best;
}

describe("every parser is linear on a 1 MB line (under a second each)", () => {
  for (const format of Object.keys(FORMATS)) {
    const json = format.endsWith("-json");
    it(`${format}`, () => {
      const shapes: [string, string][] = [
        ...Object.entries(json ? JSON_SHAPES : SHAPES),
        ...(JSON_ONCE[format] ? [["nested arrays", JSON_ONCE[format] as string] as [string, string]] : []),
        ...(OWN_LINE[format]
          ? [[`its own line, joined`, fill(OWN_LINE[format] as string)] as [string, string]]
          : []),
      ];
      const slow = shapes
        .map(([name, text]) => ({ name, ms: timed(format, text) }))
        .filter((r) => r.ms >= 1000)
        .map((r) => `${r.name}: ${Math.round(r.ms)} ms`);
      expect(slow, `${format}: 1 MB lines that took a second or more`).toEqual([]);
    });
  }

  it("every text format has its own line here", () => {
    expect(Object.keys(FORMATS).filter((f) => !f.endsWith("-json") && !OWN_LINE[f])).toEqual([]);
  });
});
