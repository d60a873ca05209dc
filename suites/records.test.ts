/** Builders on small outputs WRITTEN BY US in the tools' layouts. */
import { describe, expect, it } from "vitest";
import { parseBpfCtList } from "../helpers/parse/bpf-ct-list.ts";
import { parseBpfLbList } from "../helpers/parse/bpf-lb-list.ts";
import { parseBpftoolNet } from "../helpers/parse/bpftool-net.ts";
import { parseConfig } from "../helpers/parse/config.ts";
import { parseCurl } from "../helpers/parse/curl.ts";
import { parseEndpointJson } from "../helpers/parse/endpoint-json.ts";
import { parseEndpointSliceJson } from "../helpers/parse/endpointslice-json.ts";
import { parseIptablesSave } from "../helpers/parse/iptables-save.ts";
import { parseMapList } from "../helpers/parse/map-list.ts";
import { parseNetstat } from "../helpers/parse/netstat.ts";
import { parseServiceListJson } from "../helpers/parse/service-list-json.ts";
import { parseStatus } from "../helpers/parse/status.ts";
import { parseTcFilter } from "../helpers/parse/tc-filter.ts";
import { linesWithAddress, RecordError } from "../helpers/records/common.ts";
import { formatReport, parseReport } from "../helpers/records/report-text.ts";
import { buildIptablesRecord } from "./01-iptables/iptables.topic.ts";
import { buildSvcRecord } from "./02-service-map/service-map.topic.ts";
import { buildScaleFacts } from "./03-scale/scale.topic.ts";
import { buildCtRecord } from "./04-holder/holder.topic.ts";
import { buildProgRecord } from "./05-program/program.topic.ts";
import { buildGhostRecord } from "./07-ghost/ghost.topic.ts";

const status = parseStatus(
  "KubeProxyReplacement:    True   [eth0   172.18.0.3 (Direct Routing)]\nKubeProxyReplacement Details:\n  Socket LB:              Enabled\n  Socket LB Coverage:     Full\n",
);
const services = parseServiceListJson(
  JSON.stringify([
    {
      spec: {
        id: 12,
        "frontend-address": { ip: "10.96.44.2", port: 80, protocol: "TCP", scope: "external" },
        flags: { type: "ClusterIP", namespace: "cca-dp", name: "web" },
        "backend-addresses": [
          { ip: "10.244.1.7", port: 8080, protocol: "TCP", state: "active" },
          { ip: "10.244.2.9", port: 8080, protocol: "TCP", state: "active" },
        ],
      },
    },
    {
      spec: {
        id: 13,
        "frontend-address": { ip: "10.96.44.3", port: 80, protocol: "TCP", scope: "external" },
        flags: { type: "ClusterIP", namespace: "cca-dp", name: "ghost" },
      },
    },
  ]),
);
const lb = parseBpfLbList(
  [
    "10.96.44.2:80/TCP (0)   0.0.0.0:0 (7) (0) [ClusterIP, non-routable] ",
    "10.96.44.2:80/TCP (2)   10.244.2.9:8080/TCP (7) (2)",
    "10.96.44.2:80/TCP (1)   10.244.1.7:8080/TCP (7) (1)",
  ].join("\n"),
);
const pods = [
  { name: "web-a", ip: "10.244.1.7" },
  { name: "web-b", ip: "10.244.2.9" },
];

describe("lab record builders", () => {
  it("iptables.json: counts are numbers, the ClusterIP is matched as a whole address", () => {
    const save = [
      "-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -j KUBE-SVC-AAA",
      "-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -j KUBE-SVC-BBB",
      "-A CILIUM_FORWARD -o lxc+ -j ACCEPT",
    ].join("\n");
    const r = buildIptablesRecord({ iptablesSave: save, clusterIp: "10.96.0.1", status });
    expect(r.record).toEqual({
      cluster_ip: "10.96.0.1",
      kube_svc_lines: 2,
      cluster_ip_lines: 1,
      cilium_lines: 1,
      kube_proxy_replacement: "True",
    });
    expect(r.evidence.cluster_ip_lines).toEqual(["-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -j KUBE-SVC-AAA"]);
    expect(linesWithAddress("x 10.96.0.1:443\ny 110.96.0.1\n", "10.96.0.1")).toEqual(["x 10.96.0.1:443"]);
  });

  it("svc.json: id from the service list, slots from bpf lb list, Pod names by IP", () => {
    const r = buildSvcRecord({
      services,
      lb,
      clusterIp: "10.96.44.2",
      port: 80,
      namespace: "cca-dp",
      name: "web",
      pods,
    });
    expect(r.record).toEqual({
      service_id: 12,
      frontend: "10.96.44.2:80",
      backends: ["10.244.1.7:8080", "10.244.2.9:8080"],
      backend_pods: ["web-a", "web-b"],
    });
  });

  it("svc.json: a missing frontend is a RecordError naming the field", () => {
    expect(() =>
      buildSvcRecord({
        services,
        lb,
        clusterIp: "10.96.99.9",
        port: 80,
        namespace: "cca-dp",
        name: "web",
        pods,
      }),
    ).toThrow(RecordError);
  });

  it("ct.json from the holder log, its netstat and conntrack", () => {
    const r = buildCtRecord({
      holderIp: "10.244.1.5",
      sourcePort: 40404,
      holderLog:
        '{"event":"connected","local":"10.244.1.5:40404","peer":"10.96.44.2:80"}\n{"event":"alive"}\n',
      holderNetstat: parseNetstat(
        "tcp        0      0 10.244.1.5:40404        10.244.2.9:8080         ESTABLISHED",
      ),
      ct: parseBpfCtList(
        "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=1 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=7 SourceSecurityID=0 BackendID=2 ",
      ),
      status,
      pods,
    });
    expect(r.record).toEqual({
      client: "10.244.1.5:40404",
      app_peer: "10.96.44.2:80",
      socket_peer: "10.244.2.9:8080",
      backend: "10.244.2.9:8080",
      backend_pod: "web-b",
      svc_entries: 0,
      socket_lb_coverage: "Full",
    });
  });

  it("prog.json: device from the endpoint, attach and program from bpftool, policy map by id", () => {
    const tcRaw = "";
    const r = buildProgRecord({
      endpointId: 1234,
      endpoint: parseEndpointJson(
        JSON.stringify([
          { id: 1234, status: { networking: { "interface-name": "lxcab", "interface-index": 17 } } },
        ]),
      ),
      bpftool: parseBpftoolNet(
        "xdp:\n\ntc:\nlxcab(17) tcx/ingress cil_from_container prog_id 4773 link_id 29 \n\nflow_dissector:\n",
      ),
      tcFilterRaw: tcRaw,
      tcFilter: parseTcFilter(tcRaw),
      maps: parseMapList(
        "Name   Num entries   Num errors   Cache enabled\ncilium_policy_v2_01234   3   0   true",
      ),
    });
    expect(r.record).toEqual({
      endpoint_id: 1234,
      interface: "lxcab",
      ifindex: 17,
      attach: "tcx/ingress",
      program: "cil_from_container",
      policy_map: "cilium_policy_v2_01234",
      tc_filter_lines: 0,
    });
  });

  it("ghost.json from the service list, curl and config", () => {
    const r = buildGhostRecord({
      clusterIp: "10.96.44.3",
      port: 80,
      services,
      curl: parseCurl({
        exitCode: 7,
        stdout: "http_code=000 time_total=0.004",
        stderr: "curl: (7) Failed to connect",
      }),
      config: parseConfig("ServiceNoBackendResponse          : reject"),
    });
    expect(r.record).toEqual({
      cluster_ip: "10.96.44.3",
      backends: 0,
      curl_exit: 7,
      seconds: 0.004,
      no_backend_response: "reject",
    });
  });

  it("report.txt round-trips seven key=value lines", () => {
    const rep = {
      kube_proxy_replacement: "True",
      socket_lb_coverage: "Full",
      web_backends: 4,
      holder_backend: "10.244.2.9:8080",
      holder_program: "cil_from_container",
      nodeport_iptables_lines: 0,
      ghost_no_backend_response: "reject",
    };
    const text = formatReport(rep);
    expect(text.trim().split("\n")).toHaveLength(7);
    expect(text.split("\n")[0]).toBe("kube_proxy_replacement=True");
    expect(parseReport(text)).toEqual(rep);
    expect(() => parseReport("kube_proxy_replacement=True\n")).toThrow(/report.socket_lb_coverage: missing/);
  });
});

describe("scale facts", () => {
  it("counts the KUBE-SEP chains of cca-dp/web only, not those of cca-dp/web-np (iptables-save written by us)", () => {
    const dump = [
      "*nat",
      ":KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]",
      ":KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]",
      ":KUBE-SEP-CCCCCCCCCCCCCCCC - [0:0]",
      ":KUBE-SEP-DDDDDDDDDDDDDDDD - [0:0]",
      '-A KUBE-SEP-AAAAAAAAAAAAAAAA -p tcp -m comment --comment "cca-dp/web:http" -m tcp -j DNAT --to-destination 10.244.1.7:8080',
      "-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment cca-dp/web -m tcp -j DNAT --to-destination 10.244.2.9:8080",
      '-A KUBE-SEP-CCCCCCCCCCCCCCCC -p tcp -m comment --comment "cca-dp/web-np:http" -m tcp -j DNAT --to-destination 10.244.1.7:8080',
      "-A KUBE-SEP-DDDDDDDDDDDDDDDD -p tcp -m comment --comment cca-dp/web-np -m tcp -j DNAT --to-destination 10.244.2.9:8080",
      "COMMIT",
    ].join("\n");
    const facts = buildScaleFacts({
      iptables: parseIptablesSave(dump),
      namespace: "cca-dp",
      slices: parseEndpointSliceJson('{"items":[]}'),
      pods: [],
      targetPort: 8080,
    });
    expect(facts.record.web_sep_chains).toBe(2);
    expect(facts.evidence.web_sep_chains).toEqual(["KUBE-SEP-AAAAAAAAAAAAAAAA", "KUBE-SEP-BBBBBBBBBBBBBBBB"]);
  });
});
