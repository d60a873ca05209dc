/**
 * Every parser against the real outputs in ../shared/samples (captured from real clusters; the first line
 * of each file names its source and version). Skips with the reason when ../shared is absent.
 */
import { describe, expect, it } from "vitest";
import { SAMPLES_SKIP_REASON, sample, samplesAvailable, samplesFor } from "../samples.ts";
import { parseBpfCtList } from "./bpf-ct-list.ts";
import { parseBpfLbList } from "./bpf-lb-list.ts";
import { parseBpftoolNet } from "./bpftool-net.ts";
import { parseConfig } from "./config.ts";
import { parseEndpointJson } from "./endpoint-json.ts";
import { FORMATS } from "./index.ts";
import { allRules, kubeProxyChains, linesContaining, parseIptablesSave } from "./iptables-save.ts";
import { findPolicyMap, parseMapList } from "./map-list.ts";
import { parseServiceList } from "./service-list.ts";
import { parseServiceListJson } from "./service-list-json.ts";
import { parseStatus } from "./status.ts";
import { parseTcFilter } from "./tc-filter.ts";

/** samples/<dir> → the format that reads it. */
const SAMPLE_FORMATS: Record<string, string> = {
  "bpf-ct-list-global": "bpf-ct-list",
  "bpf-lb-list": "bpf-lb-list",
  "bpftool-net-show": "bpftool-net",
  "config-all": "config",
  "endpoint-get-json": "endpoint-json",
  "iptables-save": "iptables-save",
  "map-list": "map-list",
  "service-list": "service-list",
  "service-list-json": "service-list-json",
  status: "status",
  "status-verbose": "status",
  "tc-filter-show": "tc-filter",
};

describe.skipIf(!samplesAvailable)(
  `parsers on real samples${samplesAvailable ? "" : ` (skipped: ${SAMPLES_SKIP_REASON})`}`,
  () => {
    for (const [dir, format] of Object.entries(SAMPLE_FORMATS)) {
      const files = samplesFor(dir);
      it(`${dir}: ${files.length} sample(s) exist`, () => expect(files.length).toBeGreaterThan(0));
      for (const s of files) {
        it(`${dir}/${s.name} parses as ${format}`, () => {
          expect(() => FORMATS[format]?.parse(s.output)).not.toThrow();
        });
      }
    }

    it("service-list 1.18.6: services without backends keep type and /TCP", () => {
      const list = parseServiceList(sample("service-list", "1-").output);
      expect(list.services.map((s) => [s.id, s.frontend, s.protocol, s.type, s.backends.length])).toEqual([
        [4, "0.0.0.0:30965", "TCP", "NodePort", 0],
        [6, "10.15.1.8:443", "TCP", "LoadBalancer", 0],
        [7, "192.168.60.179:443", "TCP", "ClusterIP", 0],
      ]);
    });

    it("service-list 1.17.6: continuation rows, (preferred), trailing padding", () => {
      const list = parseServiceList(sample("service-list", "2-").output);
      expect(list.services).toHaveLength(13);
      const dns = list.services.find((s) => s.frontend === "10.2.0.10:53" && s.protocol === "UDP");
      expect(dns?.backends.map((b) => b.address)).toEqual(["10.0.0.161:53", "10.0.0.23:53"]);
      const mesh = list.services.find((s) => s.id === 13);
      expect(mesh?.backends.map((b) => [b.address, b.preferred])).toEqual([
        ["10.1.1.2:80", true],
        ["10.1.1.221:80", true],
        ["10.0.1.171:80", null],
        ["10.0.1.46:80", null],
      ]);
      expect(list.services.filter((s) => s.type === "NodePort").map((s) => s.frontend)).toEqual([
        "172.18.0.4:32379",
        "0.0.0.0:32379",
        "172.18.0.4:30001",
        "0.0.0.0:30001",
      ]);
    });

    it("service-list transcript with every line commented reads the same as the raw one", () => {
      const commented = parseServiceList(sample("service-list", "3-").output);
      expect(commented.services).toHaveLength(13);
      expect(commented.services[2]?.backends).toHaveLength(2);
    });

    it("service-list ≤1.16: bracketed IPv6, no /PROTO", () => {
      const list = parseServiceList(sample("service-list", "6-").output);
      expect(list.services[0]).toMatchObject({ frontend: "[ffff:fff:fff:701::2:dceb]:80", protocol: null });
      expect(list.services[0]?.backends[1]?.address).toBe("[ffff:fff:fff:700:0:2:7:949c]:80");
      expect(list.services[1]?.frontend).toBe("10.7.14.194:9000");
    });

    it("service-list -o json 1.18: names, namespaces and types from spec.flags", () => {
      const list = parseServiceListJson(sample("service-list-json", "1-").output);
      const api = list.services.find((s) => s.name === "kubernetes");
      expect(api).toMatchObject({
        id: 1,
        frontend: "10.96.0.1:443",
        protocol: "TCP",
        namespace: "default",
        type: "ClusterIP",
      });
      expect(api?.backends).toMatchObject([
        { address: "91.217.196.189:6443", state: "active", protocol: "TCP", preferred: true },
      ]);
      const dns = list.services.filter((s) => s.frontend === "10.96.0.10:53");
      expect(dns.length).toBeGreaterThan(0);
      expect(dns[0]?.backends.map((b) => b.address)).toContain("10.0.0.220:53");
    });

    it("bpf lb list 1.18.6: slot 0 carries revNat and flags; service ids differ from revNat", () => {
      const lb = parseBpfLbList(sample("bpf-lb-list", "1-").output);
      expect(lb.services.map((s) => [s.frontend, s.protocol, s.revNat, s.flags])).toEqual([
        ["10.15.1.8:443", "TCP", 14, ["LoadBalancer"]],
        ["0.0.0.0:30965", "TCP", 12, ["NodePort", "non-routable"]],
        ["192.168.60.179:443", "TCP", 15, ["ClusterIP", "non-routable"]],
      ]);
    });

    it("bpf lb list pre-1.16 grouped layout: continuation rows, L7LB proxy port", () => {
      const lb = parseBpfLbList(sample("bpf-lb-list", "3-").output);
      const api = lb.services.find((s) => s.frontend === "10.96.0.1:443");
      expect(api).toMatchObject({ protocol: null, revNat: 1, flags: ["ClusterIP", "non-routable"] });
      expect(api?.backends).toMatchObject([
        { address: "172.18.0.3:6443", protocol: null, slot: 1, missingBackendId: null },
      ]);
      const l7 = lb.services.find((s) => s.frontend === "172.18.0.2:32646");
      expect(l7).toMatchObject({ flags: ["NodePort", "l7-load-balancer"], l7ProxyPort: 15735 });
    });

    it("bpf lb list IPv6 grouped: backends sorted by slot whatever the row order", () => {
      const lb = parseBpfLbList(sample("bpf-lb-list", "4-").output);
      const svc = lb.services.find((s) => s.frontend === "[fd8b:bab:fcd3::a697]:9090");
      expect(svc?.backends.map((b) => [b.slot, b.address])).toEqual([
        [1, "[2406:da14:8ba:1a00:af45::4]:9090"],
        [2, "[2406:da14:8ba:1a00:af45::3]:9090"],
        [3, "[2406:da14:8ba:1a00:af45::33]:9090"],
      ]);
      expect(lb.services.find((s) => s.frontend === "[::]:8126")?.flags).toEqual([
        "HostPort",
        "non-routable",
      ]);
    });

    it("bpf ct list ≥1.18: unbracketed IPv6, SVC direction, BackendID without IfIndex", () => {
      const ct = parseBpfCtList(sample("bpf-ct-list-global", "1-").output);
      expect(ct.entries).toHaveLength(4);
      expect(ct.entries[0]).toMatchObject({
        protocol: "TCP",
        direction: "IN",
        source: "[2a00:23c8:bcb:5101:cce4:dbf7:957:33a4]:47224",
        destination: "[fd85:ee78:d8a6:8607::1:fe5]:8000",
        flags: ["RxClosing", "TxClosing", "SeenNonSyn"],
        ifIndex: null,
      });
      expect(ct.entries[1]).toMatchObject({
        direction: "SVC",
        destination: "[2a03:3f40:88:1::24]:80",
        revNat: 218,
      });
    });

    it("bpf ct list ≤1.15: Rx/Tx counters and IfIndex", () => {
      const ct = parseBpfCtList(sample("bpf-ct-list-global", "3-").output);
      expect(ct.entries[0]).toMatchObject({
        protocol: "ICMP",
        direction: "IN",
        packets: 2,
        bytes: 100,
        ifIndex: 0,
        backendId: null,
      });
      expect(ct.entries[1]?.direction).toBe("OUT");
    });

    it("status 1.17.5: the KPR device string's extra spaces do not leak into the IPs", () => {
      const st = parseStatus(sample("status", "1-").output);
      expect(st.kubeProxyReplacement).toBe("True");
      expect(st.devices).toEqual([
        {
          name: "eth0",
          ips: ["10.0.2.15", "fd17:625c:f037:2:a00:27ff:fe71:19d8", "fe80::a00:27ff:fe71:19d8"],
          directRouting: false,
        },
        { name: "eth1", ips: ["192.168.10.102", "fe80::a00:27ff:fed3:64b"], directRouting: true },
      ]);
      expect(st.routing).toBe("Network: Native Host: BPF");
      expect(st.socketLbCoverage).toBeNull();
    });

    it("status with kubectl noise: version, Kubernetes and KPR read", () => {
      const st = parseStatus(sample("status", "2-").output);
      expect(st).toMatchObject({
        kubeProxyReplacement: "True",
        ciliumVersion: "1.17.0-dev",
        kubernetesVersion: "v1.31.0",
      });
    });

    it("status legacy TC excerpt: attach mode read, KPR absent is null", () => {
      const st = parseStatus(sample("status", "5-").output);
      expect(st).toMatchObject({
        kubeProxyReplacement: null,
        attachMode: "Legacy TC",
        deviceMode: "veth",
        ciliumVersion: "1.17.4",
      });
    });

    it("status --verbose 1.17.5: socket LB and its coverage from the details block", () => {
      const st = parseStatus(sample("status-verbose", "1-").output);
      expect(st).toMatchObject({
        kubeProxyReplacement: "True",
        socketLb: "Enabled",
        socketLbCoverage: "Full",
        attachMode: "TCX",
      });
      expect(st.nodePort).toBe("Enabled (Range: 30000-32767)");
      expect(st.fields["KubeProxyReplacement Details/Graceful Termination"]).toBe("Enabled");
    });

    it("config (read-write section) 1.17.5", () => {
      const cfg = parseConfig(sample("config-all", "1-").output);
      expect(cfg.sections).toEqual(["Read-write configurations"]);
      expect(cfg.options.MonitorNumPages).toBe("64");
      expect(cfg.options.DebugPolicy).toBe("Enabled");
    });

    it("endpoint get, grep excerpt: host-side device and ifindex", () => {
      const ep = parseEndpointJson(sample("endpoint-get-json", "1-").output);
      expect(ep).toMatchObject({
        interfaceName: "lxc49adfa975abf",
        interfaceIndex: 9,
        addresses: ["172.20.2.244"],
        excerpt: true,
      });
    });

    it("map list ≥1.18: policy maps named cilium_policy_v2_<5-digit endpoint id>", () => {
      const maps = parseMapList(sample("map-list", "1-").output);
      expect(findPolicyMap(maps, 1061)?.name).toBe("cilium_policy_v2_01061");
      expect(findPolicyMap(maps, 1990)?.entries).toBe(2);
      expect(findPolicyMap(maps, 4)).toBeNull();
    });

    it("bpftool net legacy tc: `-<dev>` filter suffix removed from program names", () => {
      const net = parseBpftoolNet(sample("bpftool-net-show", "1-").output);
      const lxc = net.attachments.find((a) => a.device === "lxc1a9e66ab2e3d");
      expect(lxc).toMatchObject({
        ifindex: 88,
        attach: "clsact/ingress",
        kind: "tc",
        program: "cil_from_container",
        progId: 6905,
        linkId: null,
      });
      expect(net.sections).toEqual(["xdp", "tc", "flow_dissector", "netfilter"]);
    });

    it("bpftool net via kubectl exec: Defaulted-container noise ignored", () => {
      const net = parseBpftoolNet(sample("bpftool-net-show", "3-").output);
      expect(net.attachments[0]).toMatchObject({ device: "cilium_net", program: "cil_to_host" });
      expect(net.attachments).toHaveLength(10);
    });

    it("bpftool net tcx: prog_id and link_id", () => {
      const net = parseBpftoolNet(sample("bpftool-net-show", "5-").output);
      expect(net.attachments.find((a) => a.device === "lxc3a6f7d4e8c73")).toMatchObject({
        ifindex: 26,
        attach: "tcx/ingress",
        kind: "tcx",
        program: "cil_from_container",
        progId: 4773,
        linkId: 29,
      });
    });

    it("tc filter show with tcx: only a foreign flower filter, no Cilium program", () => {
      const tc = parseTcFilter(sample("tc-filter-show", "1-").output);
      expect(tc.filters).toEqual([expect.objectContaining({ kind: "flower", name: null, progId: null })]);
    });

    it("tc filter show legacy 2021: bpf filter name, direct-action, id and tag", () => {
      const tc = parseTcFilter(sample("tc-filter-show", "2-").output);
      expect(tc.lineCount).toBe(2);
      expect(tc.filters[0]).toMatchObject({
        kind: "bpf",
        pref: 1,
        name: "bpf_lxc.o:[from-container]",
        directAction: true,
        progId: 15843,
      });
    });

    it("iptables-save: Cilium chains and feeder rules, no kube-proxy chain", () => {
      const s = sample("iptables-save", "1-");
      const save = parseIptablesSave(s.output);
      expect(kubeProxyChains(save)).toEqual([]);
      expect(linesContaining(s.output, "CILIUM").length).toBe(40); // grep -c CILIUM on the capture
      expect(linesContaining(s.output, "KUBE-SVC")).toEqual([]);
    });

    it("iptables-save kube-proxy: KUBE-SERVICES → KUBE-SVC → KUBE-SEP → DNAT", () => {
      const s = sample("iptables-save", "2-");
      const save = parseIptablesSave(s.output);
      const rules = allRules(save);
      const svc = rules.find((r) => r.chain === "KUBE-SERVICES" && r.comment === "default/nginx cluster IP");
      expect(svc).toMatchObject({ destination: "10.0.11.45/32", target: "KUBE-SVC-2CMXP7HKUVJN7L6M" });
      const dnat = rules.find((r) => r.target === "DNAT");
      expect(dnat?.chain).toBe("KUBE-SEP-XW6I7J74P22Q2AZM");
      expect(kubeProxyChains(save)).toContain("KUBE-SVC-2CMXP7HKUVJN7L6M");
    });

    it("iptables-save with Cilium and kube-proxy: filter REJECT for services without endpoints", () => {
      const s = sample("iptables-save", "3-");
      const save = parseIptablesSave(s.output);
      const rejects = allRules(save).filter(
        (r) => r.target === "REJECT" && r.comment?.endsWith("has no endpoints"),
      );
      expect(rejects).toHaveLength(4);
      expect(save.tables.nat?.chains["KUBE-SVC-TCOU7JCQXEZGVUNU"]).toBeDefined();
      expect(save.tables.nat?.chains["KUBE-KUBELET-CANARY"]).toBeDefined();
    });
  },
);
