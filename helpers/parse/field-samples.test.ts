/**
 * Outputs people pasted in public issues and docs, for the versions the suite meets (Cilium 1.16–1.20, iproute2
 * 6.x, bpftool 7.x). Each fixture is WRITTEN BY US from the source named in its header: the output lines as
 * printed there (a few lines, not the page), trimmed where the source was truncated; what the parser must read
 * from it is asserted below. The captured samples in ../shared/samples are read by samples.test.ts.
 */
import { describe, expect, it } from "vitest";
import { parseBpfCtList } from "./bpf-ct-list.ts";
import { parseBpfLbList } from "./bpf-lb-list.ts";
import { parseBpftoolCgroup } from "./bpftool-cgroup.ts";
import { parseBpftoolNet } from "./bpftool-net.ts";
import { parseIpRoute } from "./ip-route.ts";
import { parseIptablesSave } from "./iptables-save.ts";
import { withNotes } from "./lines.ts";
import { parseServiceList } from "./service-list.ts";
import { parseStatus } from "./status.ts";
import { parseTcFilter } from "./tc-filter.ts";

interface FieldSample {
  /** Where it was read. */
  source: string;
  version: string;
  text: string;
}

const sample = (source: string, version: string, lines: string[]): FieldSample => ({
  source,
  version,
  text: lines.join("\n"),
});

/** Written by us from https://github.com/cilium/cilium/pull/43017 (review thread, 2025-12-16), Cilium main → 1.19: a DSR entry. */
const CT_DSR = sample("github.com/cilium/cilium/pull/43017", "1.19 (main, Dec 2025)", [
  "TCP OUT 172.19.0.2:57716 -> 10.244.1.1:8080 expires=319511 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=319501 TxFlagsSeen=0x1b LastTxReport=319501 Flags=0x0093 [ RxClosing TxClosing SeenNonSyn DSRInternal ] RevNAT=0 SourceSecurityID=9 BackendID=360309599644942336 NatPort=30587 ",
]);

/** Written by us from https://github.com/cilium/cilium/issues/40820 (2025), Cilium 1.18: IPv6 entries, no IfIndex. */
const CT_V6 = sample("github.com/cilium/cilium/issues/40820", "1.18", [
  "TCP SVC 2603:8080:c0f0:d2e0:99f2:9195:c043:304f:44564 -> 2a03:3f40:88:1::24:80 expires=26806933 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x1b LastTxReport=26806929 Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ] RevNAT=218 SourceSecurityID=0 BackendID=98",
]);

/**
 * Written by us from https://github.com/cilium/cilium/pull/31503 (description, 2024-03-19), Cilium main before the
 * 1.16 slot keys: the grouped layout, L7LB proxy ports, and the author's `...` elision under the header.
 */
const LB_L7 = sample("github.com/cilium/cilium/pull/31503", "main, Mar 2024 (pre-1.16)", [
  "SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)",
  "...",
  "10.96.193.7:443     0.0.0.0:0 (30) (0) [ClusterIP, non-routable, l7-load-balancer]",
  "10.96.0.1:443       172.18.0.3:6443 (1) (1)",
  "                    0.0.0.0:0 (1) (0) [ClusterIP, non-routable]",
  "172.18.0.2:32646    0.0.0.0:0 (33) (0) [NodePort, l7-load-balancer] (L7LB Proxy Port: 15735)",
]);

/** Written by us from https://github.com/cilium/cilium/pull/44301 (description, 2026-02-11), Cilium main (1.20 dev). */
const SERVICES_120 = sample("github.com/cilium/cilium/pull/44301", "1.20 (main, Feb 2026)", [
  "ID   Frontend                    Service Type   Backend",
  "1    10.96.62.28:80/TCP          ClusterIP      1 => 10.244.1.149:4245/TCP (active)",
  "2    10.96.0.10:53/TCP           ClusterIP      1 => 10.244.1.69:53/TCP (active)",
  "                                                2 => 10.244.1.109:53/TCP (active)",
  "5    10.96.0.1:443/TCP           ClusterIP      1 => 172.19.0.2:6443/TCP (active)",
]);

/**
 * Written by us from https://github.com/cilium/cilium/pull/35542 (comment, 2024-10-29), Cilium 1.17.0-dev: plain
 * `cilium status` through kubectl exec, whose first line is kubectl's container notice.
 */
const STATUS_117 = sample("github.com/cilium/cilium/pull/35542", "1.17.0-dev", [
  'Defaulted container "cilium-agent" out of: cilium-agent, config (init), mount-cgroup (init), apply-sysctl-overwrites (init), mount-bpf-fs (init), clean-cilium-state (init), install-cni-binaries (init)',
  "KVStore:                 Ok   Disabled",
  "Kubernetes:              Ok   1.31 (v1.31.0) [linux/amd64]",
  "KubeProxyReplacement:    True   [eth0    172.18.0.5 fc00:c111::5 fe80::42:acff:fe12:5 (Direct Routing)]",
  "Host firewall:           Disabled",
  "Cilium:                  Ok   1.17.0-dev (v1.17.0-dev-0bc32ae110)",
]);

/** Written by us from https://github.com/cilium/cilium/issues/29132 (2023-11-13): the verbose KPR block of that era. */
const STATUS_KPR_DETAILS = sample("github.com/cilium/cilium/issues/29132", "1.14–1.15", [
  "KubeProxyReplacement Details:",
  "  Status:                 Strict",
  "  Socket LB:              Enabled",
  "  Socket LB Coverage:     Full",
  "  Socket LB Protocols:    TCP, UDP",
  "  Devices:                eth0 10.242.0.4 (Direct Routing)",
  "  Mode:                   SNAT",
  "  Services:",
  "  - ClusterIP:      Enabled",
  "  - NodePort:       Enabled (Range: 30000-32767)",
]);

/**
 * Written by us from https://github.com/cilium/cilium/issues/30665 (2024): the rows `bpftool cgroup tree` printed
 * for Cilium's cgroup root (`cgroup show` prints the same rows for one path); bpftool 7.x type names.
 */
const CGROUP = sample("github.com/cilium/cilium/issues/30665", "1.14–1.15, bpftool 7", [
  "ID       AttachType      AttachFlags     Name           ",
  "3149     cgroup_inet4_connect multi           cil_sock4_connect",
  "3148     cgroup_udp4_sendmsg multi           cil_sock4_sendmsg",
  "3142     cgroup_udp4_recvmsg multi           cil_sock4_recvmsg",
  "3143     cgroup_inet4_getpeername multi           cil_sock4_getpeername",
]);

/** Written by us from https://github.com/cilium/cilium/issues/17468 (2021-09-24): a legacy tc attachment (iproute2 5.x). */
const TC_LEGACY = sample("github.com/cilium/cilium/issues/17468", "legacy tc, iproute2 5.x", [
  "filter protocol all pref 1 bpf chain 0 ",
  "filter protocol all pref 1 bpf chain 0 handle 0x1 bpf_lxc.o:[from-container] direct-action not_in_hw id 15843 tag a7a920f725fab0ef jited ",
]);

/** Written by us from https://github.com/cilium/cilium/pull/14895 (description, 2021-02-08): bpftool net show, legacy tc. */
const BPFTOOL_LEGACY = sample("github.com/cilium/cilium/pull/14895", "legacy tc, bpftool 5.x", [
  "xdp:",
  "",
  "tc:",
  "eth0(2) clsact/ingress bpf_network.o:[from-network] id 221",
  "lxc37bff36e0cd2(9) clsact/ingress bpf_lxc.o:[from-container] id 234",
  "lxc37bff36e0cd2(9) clsact/egress bpf_lxc.o:[to-container] id 238",
  "",
  "flow_dissector:",
]);

/**
 * Written by us from the route grammar of ip-route(8), iproute2 6.1 (https://manpages.ubuntu.com/manpages/noble/en/man8/ip-route.8.html:
 * `nhid ID`, `ttl-propagate`, `rto_min TIME`, `quickack BOOL`), and from https://github.com/cilium/cilium/pull/24288
 * (`ip -d r sh` with Cilium's routes, proto kernel): the lines a 6.x `ip route` prints for them.
 */
const ROUTES_6X = sample("ip-route(8) iproute2 6.1; github.com/cilium/cilium/pull/24288", "iproute2 6.1", [
  "default nhid 12 via 192.168.1.1 dev eth0 proto dhcp src 192.168.1.23 metric 100 ",
  "unicast 10.0.0.0/24 via 10.0.2.245 dev cilium_host proto kernel scope global src 10.0.2.245 mtu 1373 ",
  "10.0.2.0/24 dev eth0 proto kernel scope link src 10.0.2.15 rto_min 5ms quickack 1 ",
  "10.9.0.0/16 proto static metric 20 ttl-propagate disabled ",
]);

/**
 * Written by us from Cilium's own kube-proxy-free guide (cilium/cilium Documentation/network/kubernetes/
 * kubeproxy-free.rst, "Validate BPF cgroup programs attachment": `bpftool cgroup tree /run/cilium/cgroupv2/`),
 * whose rows name no program and use bpftool ≤ 6.x's short type names; the layout is bpftool's cgroup.c
 * (do_show_tree: `CgroupPath`, then the header; do_show_tree_fn: each cgroup's path, its rows indented by four
 * spaces below the root). The nested cgroup and its row are ours, in that layout.
 */
const CGROUP_TREE = sample("cilium kubeproxy-free.rst; bpftool cgroup.c", "bpftool ≤ 6.x type names", [
  "CgroupPath",
  "ID       AttachType      AttachFlags     Name           ",
  "/run/cilium/cgroupv2",
  "10613    device          multi                          ",
  "48497    connect4                                       ",
  "48493    connect6                                       ",
  "48499    sendmsg4                                       ",
  "48500    recvmsg4                                       ",
  "48498    getpeername4                                   ",
  "/run/cilium/cgroupv2/kubepods.slice",
  "    48510    device          multi                          ",
]);

/**
 * Written by us from iptables 1.8.0–1.8.2's nft backend (iptables/xtables-save.c: `printf("# Generated by
 * xtables-save v%s on %s", IPTABLES_VERSION, ctime(&now))`, no backend suffix) and the dumps people pasted from
 * Debian 10's iptables 1.8.2 (`# Generated by xtables-save v1.8.2 on Fri Oct 30 14:12:50 2020`).
 */
const XTABLES_SAVE = sample("iptables 1.8.2 iptables/xtables-save.c", "iptables 1.8.2 (nft)", [
  "# Generated by xtables-save v1.8.2 on Fri Oct 30 14:12:50 2020",
  "*nat",
  ":PREROUTING ACCEPT [0:0]",
  ":INPUT ACCEPT [0:0]",
  ":POSTROUTING ACCEPT [0:0]",
  ":OUTPUT ACCEPT [0:0]",
  "-A POSTROUTING -s 10.8.0.0/16 -o eth0 -j MASQUERADE",
  "COMMIT",
  "# Completed on Fri Oct 30 14:12:50 2020",
]);

/**
 * Written by us from a pre-1.16 agent's service entry: pkg/maps/ctmap/types.go (CtKey4Global.Dump writes
 * `related ` then `service ` after the tuple; CtEntry.String the Rx/Tx counters and a trailing `IfIndex=`), and a
 * public write-up's `cilium bpf ct list global | grep 59668` (Chinese blog, 2023-09, repository not recorded):
 * the service entry is printed frontend first, the entries of the backend connection after it.
 */
const CT_SERVICE = sample("cilium pkg/maps/ctmap/types.go; blog 2023-09", "≤ 1.15", [
  "TCP OUT 10.96.43.209:80 -> 10.0.1.90:59668 service expires=475561 RxPackets=0 RxBytes=7 RxFlagsSeen=0x00 LastRxReport=0 TxPackets=0 TxBytes=0 TxFlagsSeen=0x12 LastTxReport=453961 Flags=0x0010 [ SeenNonSyn ] RevNAT=5 SourceSecurityID=0 IfIndex=0 ",
  "TCP IN 10.0.1.90:59668 -> 10.0.1.108:80 expires=475561 RxPackets=2 RxBytes=140 RxFlagsSeen=0x12 LastRxReport=453961 TxPackets=1 TxBytes=74 TxFlagsSeen=0x12 LastTxReport=453961 Flags=0x0010 [ SeenNonSyn ] RevNAT=0 SourceSecurityID=27453 IfIndex=0 ",
  "UDP OUT 10.96.0.10:53 -> 10.0.1.90:41234 related service expires=475561 RxPackets=0 RxBytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxPackets=1 TxBytes=60 TxFlagsSeen=0x00 LastTxReport=453961 Flags=0x0000 [ ] RevNAT=3 SourceSecurityID=0 IfIndex=0 ",
]);

describe("field samples (written by us from public sources; the source and version are in each header)", () => {
  it("ct list: a DSR entry's BackendID is past 2^53 and stays exact; NatPort read", () => {
    const e = parseBpfCtList(CT_DSR.text).entries[0];
    expect(e).toMatchObject({ direction: "OUT", backendId: "360309599644942336", natPort: 30587, revNat: 0 });
    expect(e?.flags).toContain("DSRInternal");
  });

  it("ct list 1.18: unbracketed IPv6 SVC entry", () => {
    expect(parseBpfCtList(CT_V6.text).entries[0]).toMatchObject({
      direction: "SVC",
      destination: "[2a03:3f40:88:1::24]:80",
      revNat: 218,
      backendId: 98,
    });
  });

  it("bpf lb list with the author's `...` under the header: skipped and counted, L7LB ports read", () => {
    const { value, notes } = withNotes(() => parseBpfLbList(LB_L7.text));
    expect(notes.elided).toEqual([2]);
    expect(value.services.find((s) => s.frontend === "172.18.0.2:32646")).toMatchObject({
      l7ProxyPort: 15735,
      flags: ["NodePort", "l7-load-balancer"],
    });
    expect(value.services.find((s) => s.frontend === "10.96.0.1:443")?.backends).toHaveLength(1);
  });

  it("service list of a 1.20 dev agent", () => {
    const list = parseServiceList(SERVICES_120.text);
    expect(list.services.map((s) => [s.id, s.frontend, s.backends.length])).toEqual([
      [1, "10.96.62.28:80", 1],
      [2, "10.96.0.10:53", 2],
      [5, "10.96.0.1:443", 1],
    ]);
  });

  it("status through kubectl exec (the container notice skipped), dual-stack device list", () => {
    const st = parseStatus(STATUS_117.text);
    expect(st).toMatchObject({ kubeProxyReplacement: "True", ciliumVersion: "1.17.0-dev" });
    expect(st.devices[0]).toMatchObject({ name: "eth0", directRouting: true });
    expect(st.lines.KubeProxyReplacement).toBe(4);
  });

  it("status --verbose KPR details: socket LB and its coverage, each at its line", () => {
    const st = parseStatus(STATUS_KPR_DETAILS.text);
    expect(st).toMatchObject({ socketLb: "Enabled", socketLbCoverage: "Full" });
    expect(st.lines["KubeProxyReplacement Details/Socket LB Coverage"]).toBe(4);
  });

  it("bpftool cgroup: the socket-LB hooks by their bpftool 7 type names", () => {
    expect(parseBpftoolCgroup(CGROUP.text).attachments.map((a) => a.hook)).toEqual([
      "connect4",
      "sendmsg4",
      "recvmsg4",
      "getpeername4",
    ]);
  });

  it("tc filter and bpftool net of a legacy tc attachment", () => {
    expect(parseTcFilter(TC_LEGACY.text)).toMatchObject({
      lineCount: 2,
      filters: [{ name: "bpf_lxc.o:[from-container]", progId: 15843, directAction: true }],
    });
    expect(
      parseBpftoolNet(BPFTOOL_LEGACY.text).attachments.map((a) => [a.device, a.attach, a.progId]),
    ).toEqual([
      ["eth0", "clsact/ingress", 221],
      ["lxc37bff36e0cd2", "clsact/ingress", 234],
      ["lxc37bff36e0cd2", "clsact/egress", 238],
    ]);
  });

  it("ip route of iproute2 6.x: nhid, rto_min, quickack, ttl-propagate read into extra, nothing reported", () => {
    const { value, notes } = withNotes(() => parseIpRoute(ROUTES_6X.text));
    expect(value.routes.map((r) => r.extra)).toEqual([
      { nhid: "12", metric: "100" },
      {},
      { rto_min: "5ms", quickack: "1" },
      { metric: "20", "ttl-propagate": "disabled" },
    ]);
    expect(value.routes[1]).toMatchObject({ type: "unicast", dev: "cilium_host", mtu: 1373 });
    expect(notes.unknown).toEqual([]);
  });

  it("bpftool cgroup tree, as Cilium's kube-proxy-free guide prints it: rows under their cgroup path", () => {
    const { value, notes } = withNotes(() => parseBpftoolCgroup(`${CGROUP_TREE.text}\n`));
    expect(value.attachments.map((a) => [a.id, a.hook, a.flags, a.name, a.cgroup])).toEqual([
      [10613, "device", "multi", null, "/run/cilium/cgroupv2"],
      [48497, "connect4", null, null, "/run/cilium/cgroupv2"],
      [48493, "connect6", null, null, "/run/cilium/cgroupv2"],
      [48499, "sendmsg4", null, null, "/run/cilium/cgroupv2"],
      [48500, "recvmsg4", null, null, "/run/cilium/cgroupv2"],
      [48498, "getpeername4", null, null, "/run/cilium/cgroupv2"],
      [48510, "device", "multi", null, "/run/cilium/cgroupv2/kubepods.slice"],
    ]);
    expect(notes).toEqual({ elided: [], unknown: [], warnings: [] });
  });

  it("iptables 1.8.0–1.8.2's `xtables-save` header: the version read, the backend nf_tables", () => {
    const save = parseIptablesSave(`${XTABLES_SAVE.text}\n`);
    expect(save).toMatchObject({ version: "1.8.2", backend: "nf_tables" });
    expect(save.tables.nat?.rules.map((r) => r.target)).toEqual(["MASQUERADE"]);
  });

  it("ct list of a pre-1.16 agent: the `service` marker read (and `related service` together)", () => {
    const { value, notes } = withNotes(() => parseBpfCtList(`${CT_SERVICE.text}\n`));
    expect(
      value.entries.map((e) => [e.direction, e.source, e.service ?? false, e.related, e.revNat]),
    ).toEqual([
      ["OUT", "10.96.43.209:80", true, false, 5],
      ["IN", "10.0.1.90:59668", false, false, 0],
      ["OUT", "10.96.0.10:53", true, true, 3],
    ]);
    expect(value.entries[0]).toMatchObject({ packets: 0, bytes: 7, ifIndex: 0 });
    expect(notes.warnings).toEqual([]);
  });
});
