/**
 * Cilium output variants that no shared sample covers. Every fixture here is WRITTEN BY US from the
 * printers' format strings described in ../shared/knowledge/output-formats.md (not captured output).
 */
import { describe, expect, it } from "vitest";
import { ParseError } from "../errors.ts";
import { ctEntryJson, parseBpfCtList } from "./bpf-ct-list.ts";
import { parseBpfLbList, parseBpfLbListJson } from "./bpf-lb-list.ts";
import { parseConfig } from "./config.ts";
import { parseEndpointJson } from "./endpoint-json.ts";
import { parseMapList, policyMapName } from "./map-list.ts";
import { parseServiceList } from "./service-list.ts";
import { parseServiceListJson } from "./service-list-json.ts";
import { parseStatus, parseStatusJson } from "./status.ts";

describe("service-list (fixtures written by us)", () => {
  it("1.17+ internal-scope /i frontends and remote services", () => {
    const list = parseServiceList(
      [
        "ID   Frontend              Service Type       Backend   ",
        "21   0.0.0.0:30885/TCP/i   NodePort           1 => 10.1.0.78:80/TCP (terminating)   ",
        "22   10.96.5.5:80/TCP      ClusterIP (Remote) 1 => 10.9.0.4:80/TCP (active)   ",
      ].join("\n"),
    );
    expect(list.services[0]).toMatchObject({
      frontend: "0.0.0.0:30885",
      protocol: "TCP",
      scope: "internal",
      type: "NodePort",
    });
    expect(list.services[0]?.backends[0]?.state).toBe("terminating");
    expect(list.services[1]).toMatchObject({ type: "ClusterIP", remote: true });
  });

  it("rejects a row that is neither a service nor a continuation, naming the line", () => {
    const bad =
      "ID   Frontend   Service Type   Backend\n1    10.96.0.1:443/TCP   ClusterIP   1 => 10.0.0.1:6443/TCP (active)\nnot a row";
    expect(() => parseServiceList(bad)).toThrowError(/^service-list: line 3: .*"not a row"$/);
  });

  it("1.16 JSON without protocol fields", () => {
    const json = JSON.stringify([
      {
        spec: {
          "backend-addresses": [{ ip: "10.244.1.7", port: 8080, state: "active" }],
          flags: { name: "web", namespace: "cca-dp", type: "ClusterIP" },
          "frontend-address": { ip: "10.96.44.2", port: 80, scope: "external" },
          id: 12,
        },
      },
    ]);
    expect(parseServiceListJson(json).services[0]).toEqual({
      id: 12,
      frontend: "10.96.44.2:80",
      protocol: null,
      scope: "external",
      type: "ClusterIP",
      remote: false,
      namespace: "cca-dp",
      name: "web",
      backends: [
        {
          address: "10.244.1.7:8080",
          state: "active",
          protocol: null,
          preferred: null,
          path: [0, "spec", "backend-addresses", 0],
        },
      ],
      // where its spec is in the output, so evidence can quote its lines
      path: [0, "spec"],
    });
  });

  it("invalid JSON names the line", () => {
    expect(() => parseServiceListJson('[\n  {"spec": }\n]')).toThrowError(
      /^service-list-json: line 2: invalid JSON/,
    );
  });
});

describe("bpf-lb-list (fixtures written by us)", () => {
  const v117 = [
    "SERVICE ADDRESS          BACKEND ADDRESS (REVNAT_ID) (SLOT)",
    "10.96.44.2:80/TCP (2)    10.244.2.9:8080/TCP (7) (2)   ",
    "10.96.44.2:80/TCP (0)    0.0.0.0:0 (7) (0) [ClusterIP, non-routable] ",
    "10.96.44.2:80/TCP (1)    10.244.1.7:8080/TCP (7) (1)   ",
    "10.96.44.2:0/ANY (0)     0.0.0.0:0 (0) (0) [ClusterIP, non-routable] ",
    "[fd00::10]:53/UDP/i (0)  [::]:0 (9) (0) [ClusterIP, InternalLocal, non-routable] ",
    "10.96.44.3:80/TCP (1)    backend 41 not found",
  ].join("\n");

  it("1.17+ slot keys in random order: backends sorted, revNat from slot 0", () => {
    const lb = parseBpfLbList(v117);
    const web = lb.services.find((s) => s.frontend === "10.96.44.2:80" && s.protocol === "TCP");
    expect(web).toMatchObject({ revNat: 7, flags: ["ClusterIP", "non-routable"] });
    expect(web?.backends.map((b) => [b.slot, b.address, b.protocol])).toEqual([
      [1, "10.244.1.7:8080", "TCP"],
      [2, "10.244.2.9:8080", "TCP"],
    ]);
  });

  it("1.19+ wildcard `<vip>:0/ANY` rows, IPv6 internal scope, missing backend", () => {
    const lb = parseBpfLbList(v117);
    expect(lb.services.find((s) => s.protocol === "ANY")).toMatchObject({
      frontend: "10.96.44.2:0",
      revNat: 0,
      backends: [],
    });
    expect(lb.services.find((s) => s.frontend === "[fd00::10]:53")).toMatchObject({
      protocol: "UDP",
      scope: "internal",
    });
    expect(lb.services.find((s) => s.frontend === "10.96.44.3:80")?.backends).toEqual([
      { address: null, protocol: null, slot: 1, missingBackendId: 41, line: 7 },
    ]);
  });

  it("1.16 slot keys without /PROTO", () => {
    const lb = parseBpfLbList(
      "10.96.0.1:443 (1)   172.18.0.3:6443 (1) (1)\n10.96.0.1:443 (0)   0.0.0.0:0 (1) (0) [ClusterIP, non-routable] ",
    );
    expect(lb.services[0]).toMatchObject({ frontend: "10.96.0.1:443", protocol: null, revNat: 1 });
    expect(lb.services[0]?.backends[0]?.address).toBe("172.18.0.3:6443");
  });

  it("-o json: map of key → values", () => {
    const lb = parseBpfLbListJson(
      JSON.stringify({
        "10.96.44.2:80/TCP (0)": ["0.0.0.0:0 (7) (0) [ClusterIP, non-routable] "],
        "10.96.44.2:80/TCP (1)": ["10.244.1.7:8080/TCP (7) (1)"],
      }),
    );
    expect(lb.services[0]?.backends).toHaveLength(1);
    expect(lb.services[0]?.revNat).toBe(7);
  });

  it("a malformed backend column names the line", () => {
    expect(() => parseBpfLbList("10.96.44.2:80/TCP (1)    garbage here")).toThrowError(
      /^bpf-lb-list: line 1: backend column/,
    );
  });
});

describe("bpf-ct-list (fixtures written by us)", () => {
  const tail116 =
    "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 IfIndex=0 BackendID=3 ";
  it("1.16/1.17 tail: IfIndex and BackendID", () => {
    const e = parseBpfCtList(tail116).entries[0];
    expect(e).toMatchObject({
      direction: "OUT",
      source: "10.244.1.5:40404",
      destination: "10.244.2.9:8080",
      revNat: 7,
      backendId: 3,
      ifIndex: 0,
    });
  });
  it("1.19+ NatPort tail, `-d` remaining time, related ICMP, empty flags", () => {
    const ct = parseBpfCtList(
      [
        "TCP SVC 10.244.1.5:40404 -> 10.96.44.2:80 expires=17013 (remaining: 21540 sec(s)) Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x02 LastTxReport=16993 Flags=0x0000 [ ] RevNAT=7 SourceSecurityID=0 BackendID=3 NatPort=0 ",
        "",
        "ICMP OUT 10.244.1.5:0 -> 10.96.44.3:0 related expires=100 Packets=1 Bytes=98 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=40 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0 BackendID=0 ",
      ].join("\n"),
    );
    expect(ct.entries[0]).toMatchObject({
      direction: "SVC",
      destination: "10.96.44.2:80",
      natPort: 0,
      flags: [],
      backendId: 3,
    });
    expect(ct.entries[1]).toMatchObject({ protocol: "ICMP", related: true, packets: 1 });
  });
  it("64-bit counters keep their exact printed value past 2^53, on both parse paths and in JSON", () => {
    // Packets/Bytes (merged) and RxPackets/TxPackets (split) as Cilium prints its __u64 counters
    const merged =
      "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=17013 Packets=9007199254740993 Bytes=18446744073709551615 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 IfIndex=0 BackendID=3 ";
    const split =
      "TCP OUT 10.244.1.5:40405 -> 10.244.2.9:8080 expires=17013 RxPackets=9007199254740992 RxBytes=1 RxFlagsSeen=0x1b LastRxReport=16993 TxPackets=1 TxBytes=2 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0010 [ SeenNonSyn ] RevNAT=7 SourceSecurityID=0 IfIndex=0 BackendID=3 ";
    // a line the fast regex does not take (an unknown field order) goes through the scanner
    const scanned =
      "TCP OUT 10.244.1.5:40406 -> 10.244.2.9:8080 expires=17013 Flags=0x0010 [ SeenNonSyn ] Packets=18446744073709551615 Bytes=5 RevNAT=7 SourceSecurityID=0 ";
    const [a, b, c] = parseBpfCtList([merged, split, scanned].join("\n")).entries;
    expect(a).toMatchObject({ packets: "9007199254740993", bytes: "18446744073709551615" });
    expect(b).toMatchObject({ packets: "9007199254740993", bytes: 3 });
    expect(c).toMatchObject({ packets: "18446744073709551615", bytes: 5 });
    expect(JSON.stringify(a)).toContain('"bytes":"18446744073709551615"');
    // below 2^53 they stay numbers
    expect(parseBpfCtList(tail116).entries[0]).toMatchObject({ packets: 0, bytes: 0 });
  });
  it("the streamed JSON of an entry is JSON.stringify's, byte for byte", () => {
    const lines = [
      tail116,
      "TCP SVC 10.244.1.5:40404 -> 10.96.44.2:80 expires=17013 (remaining: 21540 sec(s)) Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x02 LastTxReport=16993 Flags=0x0000 [ ] RevNAT=7 SourceSecurityID=0 BackendID=3 NatPort=0 ",
      "ICMP OUT 10.244.1.5:0 -> 10.96.44.3:0 related expires=100 Packets=1 Bytes=98 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=40 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0 BackendID=0 ",
      "TCP OUT [fd00::5]:40404 -> [fd00::9]:8080 expires=17013 Packets=9007199254740993 Bytes=18446744073709551615 RxFlagsSeen=0x1b LastRxReport=16993 TxFlagsSeen=0x1b LastTxReport=16993 Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ] RevNAT=7 SourceSecurityID=0 IfIndex=0 BackendID=3 ",
    ];
    for (const e of parseBpfCtList(lines.join("\n")).entries) expect(ctEntryJson(e)).toBe(JSON.stringify(e));
  });
  it("a non-entry line names the line", () => {
    expect(() => parseBpfCtList(`${tail116}\nhello world`)).toThrowError(
      /^bpf-ct-list: line 2: .*"hello world"$/,
    );
  });
});

describe("status (fixtures written by us)", () => {
  it("--verbose 1.18+: Hostns-only coverage, no Graceful Termination, Annotations (n/a)", () => {
    const st = parseStatus(
      [
        "KubeProxyReplacement:    True   [eth0    172.18.0.3 fc00:c111::3 fe80::42:acff:fe12:3 (Direct Routing)]",
        "Routing:                 Network: Tunnel [vxlan]   Host: Legacy",
        "Attach Mode:             TCX",
        "Cilium:                  Ok   1.20.1 (v1.20.1-1a2b3c4d)",
        "KubeProxyReplacement Details:",
        "  Status:                 True",
        "  Socket LB:              Enabled",
        "  Socket LB Tracing:      Enabled",
        "  Socket LB Coverage:     Hostns-only",
        "  Services:",
        "  - ClusterIP:      Enabled",
        "  - NodePort:       Enabled (Range: 30000-32767) ",
        "  Annotations:      (n/a)",
        "Encryption:              Disabled",
      ].join("\n"),
    );
    expect(st).toMatchObject({
      kubeProxyReplacement: "True",
      socketLbCoverage: "Hostns-only",
      routing: "Network: Tunnel [vxlan] Host: Legacy",
      tunnelProtocol: "vxlan",
      ciliumVersion: "1.20.1",
      nodePort: "Enabled (Range: 30000-32767)",
    });
    expect(st.devices[0]?.ips).toEqual(["172.18.0.3", "fc00:c111::3", "fe80::42:acff:fe12:3"]);
    expect(st.fields.Encryption).toBe("Disabled");
  });

  it("KPR False prints no device bracket", () => {
    expect(parseStatus("KubeProxyReplacement:    False").kubeProxyReplacement).toBe("False");
  });

  it("input with no status line at all is an error", () => {
    expect(() => parseStatus("\nsomething else entirely\n")).toThrowError(/^status: line 2: no `Key: value`/);
  });

  it("-o json: mode, socket LB coverage, attach mode, routing, devices with empty IP slots", () => {
    const st = parseStatusJson(
      JSON.stringify({
        "kube-proxy-replacement": {
          mode: "True",
          deviceList: [{ name: "eth0", ip: ["", "", "172.18.0.3", "fc00:c111::3"] }],
          directRoutingDevice: "eth0",
          features: {
            socketLB: { enabled: true },
            nodePort: { enabled: true, portMin: 30000, portMax: 32767 },
          },
        },
        "attach-mode": "tcx",
        routing: {
          "inter-host-routing-mode": "Tunnel",
          "intra-host-routing-mode": "Legacy",
          "tunnel-protocol": "vxlan",
        },
        cilium: { state: "Ok", msg: "1.19.6 (v1.19.6-abc)" },
      }),
    );
    expect(st).toMatchObject({
      kubeProxyReplacement: "True",
      socketLb: "Enabled",
      socketLbCoverage: "Full",
      attachMode: "TCX",
      routing: "Network: Tunnel [vxlan] Host: Legacy",
      ciliumVersion: "1.19.6",
    });
    expect(st.devices).toEqual([{ name: "eth0", ips: ["172.18.0.3", "fc00:c111::3"], directRouting: true }]);
  });

  it("-o json with KPR False and socket LB omitted (omitempty = false)", () => {
    const st = parseStatusJson(JSON.stringify({ "kube-proxy-replacement": { mode: "False", features: {} } }));
    expect(st).toMatchObject({
      kubeProxyReplacement: "False",
      socketLb: "Disabled",
      socketLbCoverage: "Full",
    }); // printed "Full" whether or not socket LB is on (pkg/client/client.go)
  });
});

describe("config -a (fixture written by us)", () => {
  it("read-only section: padded keys, long unpadded keys, empty values, nested maps", () => {
    const cfg = parseConfig(
      [
        "#### Read-only configurations ####",
        "BGPSecretsNamespace               : ",
        "DNSProxyConcurrencyProcessingGracePeriod: 0",
        "EnableTCX                         : true",
        "IPv4NativeRoutingCIDR",
        "\tIP                        : 10.244.0.0",
        "ServiceNoBackendResponse          : reject",
        "##### Read-write configurations #####",
        "Debug                             : Disabled",
      ].join("\n"),
    );
    expect(cfg.options).toMatchObject({
      BGPSecretsNamespace: "",
      DNSProxyConcurrencyProcessingGracePeriod: "0",
      "IPv4NativeRoutingCIDR.IP": "10.244.0.0",
      ServiceNoBackendResponse: "reject",
      Debug: "Disabled",
    });
    expect(cfg.sections).toEqual(["Read-only configurations", "Read-write configurations"]);
  });

  it("a map's name line joined to the value before it is refused, naming the line; units and words are values", () => {
    const head = "#### Read-only configurations ####";
    for (const joined of [
      "LogDriver                         : []LogOpt",
      "BPFEventsTraceEnabled             : true BPFMapEventBuffers",
      "MTU                               : 1500LogOpt",
    ])
      expect(() => parseConfig([head, joined].join("\n")), joined).toThrow(/line 2: .*two lines joined/);
    const cfg = parseConfig(
      [
        head,
        "BPFMapsDynamicSizeRatio           : 0.0025",
        "Size                              : 10G",
        "Name                              : [a b]",
      ].join("\n"),
    );
    expect(cfg.options).toMatchObject({ BPFMapsDynamicSizeRatio: "0.0025", Size: "10G", Name: "[a b]" });
  });
});

describe("endpoint get (fixture written by us)", () => {
  it("whole JSON array: id, device, ifindex, pod", () => {
    const ep = parseEndpointJson(
      JSON.stringify([
        {
          id: 1234,
          status: {
            state: "ready",
            identity: { id: 51234 },
            "external-identifiers": { "k8s-namespace": "cca-dp", "k8s-pod-name": "holder" },
            networking: {
              addressing: [{ ipv4: "10.244.1.5" }],
              "interface-name": "lxc0a1b2c3d4e5f",
              "interface-index": 17,
              "container-interface-name": "eth0",
            },
          },
        },
      ]),
    );
    expect(ep).toMatchObject({
      id: 1234,
      interfaceName: "lxc0a1b2c3d4e5f",
      interfaceIndex: 17,
      namespace: "cca-dp",
      podName: "holder",
      identity: 51234,
      excerpt: false,
    });
  });
  it("neither JSON nor an excerpt", () => {
    expect(() => parseEndpointJson("Error: endpoint not found")).toThrow(ParseError);
  });
});

describe("map list", () => {
  it("`unknown` entry counts (maps without a cache), as a 1.19.7 agent prints them on the lab cluster (rows written by us in that layout)", () => {
    const list = parseMapList(
      "Name                       Num entries   Num errors   Cache enabled\ncilium_policy_v2_03106     3             0            true\ncilium_metrics             unknown       0            false\n",
    );
    expect(list.maps).toEqual([
      { name: "cilium_policy_v2_03106", entries: 3, errors: 0, cacheEnabled: true, line: 2 },
      { name: "cilium_metrics", entries: null, errors: 0, cacheEnabled: false, line: 3 },
    ]);
    expect(() => parseMapList("cilium_metrics  many  0  false")).toThrow(/map-list: line 1:/);
  });
});

describe("policy map naming", () => {
  it("zero-pads to 5 digits, `_v2_` since 1.17", () => {
    expect(policyMapName(123, 16)).toBe("cilium_policy_00123");
    expect(policyMapName(123, 19)).toBe("cilium_policy_v2_00123");
    expect(policyMapName(123, 20)).toBe("cilium_policy_v3_00123");
  });
});
