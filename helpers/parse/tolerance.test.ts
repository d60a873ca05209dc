/**
 * The parsers' rule (issue 19): tolerant of what real clusters and people print, strict about structure.
 *   - a line a human elided (`...`, `....`, `[...]`, `(...)`, `…`) is skipped and counted, in every format;
 *   - an unknown keyword or trailing field is kept raw (in `extra`) and reported, never fatal;
 *   - every 64-bit field keeps its exact printed value past 2^53.
 * Adversarial fixtures WRITTEN BY US in each tool's layout (the layouts are those the other parser tests and
 * the recorded bundles use); field samples from public sources are in field-samples.test.ts.
 */
import { describe, expect, it } from "vitest";
import { parseBpfCtList } from "./bpf-ct-list.ts";
import { parseBpfLbBackends } from "./bpf-lb-backends.ts";
import { parseBpfLbList } from "./bpf-lb-list.ts";
import { parseBpftoolCgroup } from "./bpftool-cgroup.ts";
import { parseBpftoolNet } from "./bpftool-net.ts";
import { parseEndpointJson } from "./endpoint-json.ts";
import { FORMATS } from "./index.ts";
import { parseIpRoute } from "./ip-route.ts";
import { withNotes } from "./lines.ts";
import { parseMapList } from "./map-list.ts";
import { parseNetstat } from "./netstat.ts";
import { parseServiceList } from "./service-list.ts";
import { parseServiceListJson } from "./service-list-json.ts";
import { parseStatus } from "./status.ts";

/** One valid output per text format; `at` is where an elision may stand (between two records). */
const TEXT: Record<string, { lines: string[]; at: number }> = {
  "service-list": {
    lines: [
      "ID   Frontend              Service Type   Backend",
      "1    10.96.0.1:443/TCP     ClusterIP      1 => 172.18.0.3:6443/TCP (active)",
      "6    10.96.44.2:80/TCP     ClusterIP      1 => 10.244.1.7:8080/TCP (active)",
      "                                          2 => 10.244.2.9:8080/TCP (active)",
    ],
    at: 2,
  },
  "bpf-lb-list": {
    lines: [
      "SERVICE ADDRESS          BACKEND ADDRESS (REVNAT_ID) (SLOT)",
      "10.96.44.2:80/TCP (1)    10.244.1.7:8080/TCP (7) (1)",
      "10.96.44.2:80/TCP (0)    0.0.0.0:0 (7) (0) [ClusterIP, non-routable] ",
    ],
    at: 2,
  },
  "bpf-lb-backends": {
    lines: ["ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)", "13   TCP://10.244.1.174", "7    UDP://10.244.0.12"],
    at: 2,
  },
  "bpf-ct-list": {
    lines: [
      "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 BackendID=3 NatPort=0 ",
      "UDP IN 10.244.0.3:53 -> 10.244.1.5:41234 expires=120 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=2 BackendID=0 NatPort=0 ",
    ],
    at: 1,
  },
  status: {
    lines: [
      "KubeProxyReplacement:    True   [eth0   172.18.0.3 (Direct Routing)]",
      "Cilium:                  Ok   1.19.7 (v1.19.7-deadbeef)",
      "Attach Mode:             TCX",
    ],
    at: 2,
  },
  config: {
    lines: [
      "##### Read-write configurations #####",
      "ServiceNoBackendResponse          : reject",
      "EnableSocketLB                    : true",
    ],
    at: 2,
  },
  "map-list": {
    lines: [
      "Name                       Num entries   Num errors   Cache enabled",
      "cilium_policy_v2_03106     3             0            true",
      "cilium_lb4_reverse_sk      1             0            true",
    ],
    at: 2,
  },
  "bpftool-net": {
    lines: [
      "xdp:",
      "",
      "tc:",
      "lxc0a1b2c3(17) tcx/ingress cil_from_container prog_id 4773 link_id 29 ",
      "lxc0a1b2c3(17) tcx/egress cil_to_container prog_id 4774 link_id 30 ",
    ],
    at: 4,
  },
  "bpftool-cgroup": {
    lines: [
      "ID       AttachType      AttachFlags     Name",
      "3149     cgroup_inet4_connect multi           cil_sock4_connect",
      "3148     cgroup_udp4_sendmsg multi           cil_sock4_sendmsg",
    ],
    at: 2,
  },
  "tc-filter": {
    lines: [
      "filter protocol all pref 1 bpf chain 0 ",
      "filter protocol all pref 1 bpf chain 0 handle 0x1 cil_from_container-lxc0a1b2c3 direct-action not_in_hw id 4773 name cil_from_contai tag 2b6a3bca3f6b4a0c jited ",
    ],
    at: 1,
  },
  "iptables-save": {
    lines: [
      "*nat",
      ":KUBE-SERVICES - [0:0]",
      '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -j KUBE-SVC-TCOU7JCQXEZGVUNU',
      "-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS",
      "COMMIT",
    ],
    at: 3,
  },
  ss: {
    lines: [
      "LISTEN 0      4096         0.0.0.0:10250      0.0.0.0:*",
      "LISTEN 0      4096       127.0.0.1:10248      0.0.0.0:*",
    ],
    at: 1,
  },
  netstat: {
    lines: [
      "Active Internet connections (w/o servers)",
      "Proto Recv-Q Send-Q Local Address           Foreign Address         State       ",
      "tcp        0      0 10.244.1.5:40404        10.244.2.9:8080         ESTABLISHED ",
      "tcp        0      0 10.244.1.5:51712        10.96.0.1:443           ESTABLISHED ",
    ],
    at: 3,
  },
  "proc-net-tcp": {
    lines: [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0902F40A:1F90 0501F40A:9DD4 01 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 20 4 30 10 -1",
      "   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1",
    ],
    at: 2,
  },
  "ip-route": {
    lines: [
      "default via 172.31.100.1 dev eth0 ",
      "10.244.1.0/24 via 10.244.2.72 dev cilium_host proto kernel src 10.244.2.72 mtu 1450 ",
      "172.31.100.0/24 dev eth0 proto kernel scope link src 172.31.100.4 ",
    ],
    at: 1,
  },
  "ip-addr": {
    lines: [
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever",
      "5: cilium_host    inet 10.244.2.72/32 scope global cilium_host\\       valid_lft forever preferred_lft forever",
    ],
    at: 1,
  },
  "nft-ruleset": {
    lines: [
      "table ip kube-proxy {",
      "\tchain service-ZF4NGCZL-cca-dp/web/tcp/http {",
      "\t\tip daddr 10.96.47.26 ip saddr != 10.244.0.0/16 jump mark-for-masquerade",
      "\t}",
      "\tchain mark-for-masquerade {",
      "\t\tmeta mark set meta mark | 0x00004000",
      "\t}",
      "}",
    ],
    at: 4,
  },
  tcpdump: {
    lines: [
      "listening on any, link-type LINUX_SLL2 (Linux cooked v2), snapshot length 262144 bytes",
      "12:17:46.018029 eth0  Out IP 172.31.100.3.43098 > 172.31.100.2.8472: VXLAN, flags [I] (0x08), vni 56921",
      "IP 10.244.0.222.34529 > 10.244.1.91.53: 4660+ A? kubernetes.default.svc.cluster.local. (55)",
      "12:17:46.019092 eth0  In  IP 172.31.100.2.37966 > 172.31.100.3.8472: VXLAN, flags [I] (0x08), vni 18547",
      "IP 10.244.1.91.53 > 10.244.0.222.34529: 4660* 1/0/0 A 10.96.0.1 (108)",
    ],
    at: 3,
  },
};

/** The parse without the line numbers (they move by one where a line is added). */
function shape(v: unknown): unknown {
  return JSON.parse(
    JSON.stringify(v, (k, x) => (k === "line" || k === "innerLine" || k === "lines" ? undefined : x)),
  );
}

const ELISIONS = ["...", "....", "[...]", "(...)", "…", "   ...   "];

describe("a line a human elided is skipped and counted, in every text format", () => {
  it("every text format the CLI reads has a fixture here", () => {
    const json = new Set([
      "service-list-json",
      "bpf-lb-list-json",
      "status-json",
      "endpoint-json",
      "metrics-json",
      "bpftool-net-json",
      "endpointslice-json",
      "curl",
      "bind-probe",
    ]);
    expect(Object.keys(FORMATS).filter((f) => !json.has(f) && !(f in TEXT))).toEqual([]);
  });

  for (const [format, { lines, at }] of Object.entries(TEXT))
    it.each(ELISIONS)(`${format}: %j`, (mark) => {
      const parse = FORMATS[format]?.parse as (s: string) => unknown;
      const whole = parse(lines.join("\n"));
      const elided = [...lines.slice(0, at), mark, ...lines.slice(at)].join("\n");
      const { value, notes } = withNotes(() => parse(elided));
      expect(notes.elided).toEqual([at + 1]);
      expect(shape(value)).toEqual(shape(whole));
    });

  it("an elided JSON document: the elision lines are skipped and the comma they leave dangling is accepted", () => {
    const doc = [
      "[",
      '  {"spec": {"id": 1, "frontend-address": {"ip": "10.96.0.1", "port": 443, "scope": "external"}}},',
      "  ...",
      '  {"spec": {"id": 6, "frontend-address": {"ip": "10.96.44.2", "port": 80, "scope": "external"}}},',
      "  [...]",
      "]",
    ].join("\n");
    const { value, notes } = withNotes(() => parseServiceListJson(doc));
    expect(notes.elided).toEqual([3, 5]);
    expect(value.services.map((s) => s.id)).toEqual([1, 6]);
    // without an elision a dangling comma is still an error: structure stays strict
    expect(() =>
      parseServiceListJson('[{"spec": {"id": 1, "frontend-address": {"ip": "a", "port": 1}}},\n]'),
    ).toThrow(/service-list-json: line 2: invalid JSON/);
  });

  it("garbage is still garbage: a line that is neither a record nor an elision names its line", () => {
    expect(() => parseBpfLbList("10.96.44.2:80/TCP (1)    garbage here")).toThrow(/^bpf-lb-list: line 1:/);
    expect(() => parseMapList("cilium_metrics  many  0  false")).toThrow(/^map-list: line 1:/);
    expect(() => parseIpRoute("via 10.0.0.1 dev eth0")).toThrow(/^ip-route: line 1: expected a destination/);
  });
});

describe("noise is skipped only whole (written by us)", () => {
  const notice =
    'Defaulted container "cilium-agent" out of: cilium-agent, config (init), mount-cgroup (init), install-cni-binaries (init)';
  it("kubectl's container notice alone is skipped; joined with the first line it is not, and that line is read", () => {
    const status = "KVStore:                 Ok   Disabled\nKubernetes:              Ok   1.31 (v1.31.0)\n";
    expect(parseStatus(`${notice}\n${status}`).fields.KVStore).toBe("Ok   Disabled");
    // the first status line glued to the notice: not skipped as the notice, refused as a status line
    expect(() => parseStatus(`${notice}${status}`)).toThrow(/^status: line 1: /);
    expect(() => parseMapList(`${notice}cilium_lb4_reverse_sk   1   0   true\n`)).toThrow(
      /^map-list: line 1: /,
    );
  });
});

describe("an unknown keyword or trailing field is kept in `extra` and reported, never fatal", () => {
  it("ip route: keywords of a newer iproute2 (nhid, rto_min, ttl-propagate, a keyword not yet invented)", () => {
    const { value, notes } = withNotes(() =>
      parseIpRoute(
        [
          "default nhid 12 via 192.168.1.1 dev eth0 proto dhcp src 192.168.1.23 metric 100 ",
          "10.244.1.0/24 via 10.244.2.72 dev cilium_host proto kernel src 10.244.2.72 mtu 1450 rto_min lock 5ms ttl-propagate disabled quantum_flux 7 ",
          "10.9.0.0/16 proto static metric 20 ",
          "\tnexthop via 10.0.0.1 dev eth1 weight 1 ",
          "\tnexthop via 10.0.0.2 dev eth2 weight 2 linkdown ",
        ].join("\n"),
      ),
    );
    const [def, pod, multi] = value.routes;
    expect(def).toMatchObject({
      destination: "default",
      via: "192.168.1.1",
      dev: "eth0",
      src: "192.168.1.23",
    });
    expect(def?.extra).toEqual({ nhid: "12", metric: "100" });
    expect(pod).toMatchObject({ dev: "cilium_host", mtu: 1450 });
    expect(pod?.extra).toEqual({ rto_min: "5ms", "ttl-propagate": "disabled", quantum_flux: "7" });
    expect(multi?.nexthops).toEqual([
      { via: "10.0.0.1", dev: "eth1", weight: 1, flags: [] },
      { via: "10.0.0.2", dev: "eth2", weight: 2, flags: ["linkdown"] },
    ]);
    // only the keyword no iproute2 prints is reported
    expect(notes.unknown).toEqual([{ line: 2, token: 'keyword "quantum_flux"', text: "quantum_flux 7" }]);
  });

  it("bpf lb list, lb backends, map list, bpftool net/cgroup, ct list, service list, netstat -p", () => {
    const cases: [string, () => unknown, number][] = [
      [
        "bpf-lb-list",
        () => parseBpfLbList("10.96.44.2:80/TCP (1)    10.244.1.7:8080/TCP (7) (1) (weight 100)"),
        1,
      ],
      ["bpf-lb-backends", () => parseBpfLbBackends("13   TCP://10.244.1.174 [zone-a] terminating"), 1],
      ["map-list", () => parseMapList("cilium_lb4_reverse_sk   1   0   true   lru"), 1],
      [
        "bpftool-net",
        () => parseBpftoolNet("lxc1(7) tcx/ingress cil_from_container prog_id 105 link_id 89 prio 3"),
        1,
      ],
      [
        "bpftool-cgroup",
        () => parseBpftoolCgroup("3149  cgroup_inet4_connect  multi  cil_sock4_connect  tag:ab12"),
        1,
      ],
      [
        "bpf-ct-list",
        () =>
          parseBpfCtList(
            "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=0 Bytes=0 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 BackendID=3 NatPort=0 Zone=2 ",
          ),
        1,
      ],
      [
        "service-list",
        () =>
          parseServiceList(
            "6    10.96.44.2:80/TCP     ClusterIP      1 => 10.244.1.7:8080/TCP (active) (zone: a)",
          ),
        1,
      ],
      [
        "netstat",
        () =>
          parseNetstat(
            "tcp        0      0 10.244.1.5:40404        10.244.2.9:8080         ESTABLISHED 1/holder",
          ),
        1,
      ],
    ];
    for (const [format, parse, line] of cases) {
      const { value, notes } = withNotes(parse);
      expect(notes.unknown, format).toEqual([expect.objectContaining({ line })]);
      expect(JSON.stringify(value), format).toContain('"extra":{');
    }
  });
});

describe("every 64-bit field keeps its exact printed value past 2^53", () => {
  const BIG = "18446744073709551615";
  it("bpf ct list: BackendID (a union, not a counter: 360309599644942336 on a DSR entry, cilium PR 43017)", () => {
    const [e] = parseBpfCtList(
      "TCP OUT 172.19.0.2:57716 -> 10.244.1.1:8080 expires=319511 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=319501 TxFlagsSeen=0x1b LastTxReport=319501 Flags=0x0093 [ RxClosing TxClosing SeenNonSyn DSRInternal ] RevNAT=0 SourceSecurityID=9 BackendID=360309599644942336 NatPort=30587 ",
    ).entries;
    expect(e?.backendId).toBe("360309599644942336");
    expect(e?.natPort).toBe(30587);
  });

  it("netstat queues, map list counts, service ids (text and JSON), endpoint ids (JSON)", () => {
    expect(
      parseNetstat(`tcp   ${BIG}      0 10.244.1.5:40404        10.244.2.9:8080         ESTABLISHED`)
        .connections[0]?.recvQ,
    ).toBe(BIG);
    expect(parseMapList(`cilium_lb4_reverse_sk   ${BIG}   0   true`).maps[0]?.entries).toBe(BIG);
    expect(
      parseServiceList(`${BIG}    10.96.44.2:80/TCP     ClusterIP      1 => 10.244.1.7:8080/TCP (active)`)
        .services[0]?.id,
    ).toBe(BIG);
    expect(
      parseServiceListJson(`[{"spec": {"id": ${BIG}, "frontend-address": {"ip": "10.96.44.2", "port": 80}}}]`)
        .services[0]?.id,
    ).toBe(BIG);
    const ep = parseEndpointJson(
      `[{"id": 9007199254740993, "status": {"identity": {"id": ${BIG}}, "networking": {"interface-name": "lxc1", "interface-index": 17}}}]`,
    );
    expect(ep).toMatchObject({ id: "9007199254740993", identity: BIG, interfaceIndex: 17 });
  });

  it("small values stay numbers, so nothing else changes", () => {
    expect(parseMapList("cilium_lb4_reverse_sk   1   0   true").maps[0]?.entries).toBe(1);
    expect(
      parseServiceListJson('[{"spec": {"id": 12, "frontend-address": {"ip": "a", "port": 1}}}]').services[0]
        ?.id,
    ).toBe(12);
  });
});
