// One file over 450 lines: every topic's builders on small outputs of the tools' layouts, sharing their readers
/** Builders on small outputs WRITTEN BY US in the tools' layouts. */
import { describe, expect, it } from "vitest";
import { curlRead } from "../helpers/observe/steps.ts";
import { parseBpfCtList } from "../helpers/parse/bpf-ct-list.ts";
import { parseBpfLbList } from "../helpers/parse/bpf-lb-list.ts";
import { parseBpftoolNet } from "../helpers/parse/bpftool-net.ts";
import { parseConfig } from "../helpers/parse/config.ts";
import { parseEndpointJson } from "../helpers/parse/endpoint-json.ts";
import { parseEndpointSliceJson } from "../helpers/parse/endpointslice-json.ts";
import { parseIpRoute } from "../helpers/parse/ip-route.ts";
import { parseIptablesSave } from "../helpers/parse/iptables-save.ts";
import { parseMapList } from "../helpers/parse/map-list.ts";
import { parseNetstat } from "../helpers/parse/netstat.ts";
import { parseServiceListJson } from "../helpers/parse/service-list-json.ts";
import { parseStatus } from "../helpers/parse/status.ts";
import { parseTcFilter } from "../helpers/parse/tc-filter.ts";
import { parseTcpdump } from "../helpers/parse/tcpdump.ts";
import { linesWithAddress, RecordError } from "../helpers/records/common.ts";
import { RawText, type Read, read } from "../helpers/records/evidence.ts";
import { buildIptablesRecord } from "./01-iptables/iptables.topic.ts";
import { buildSvcRecord } from "./02-service-map/service-map.topic.ts";
import { buildScaleFacts } from "./03-scale/scale.topic.ts";
import { buildCtRecord } from "./04-holder/holder.topic.ts";
import { buildProgRecord } from "./05-program/program.topic.ts";
import { buildErrnoFacts, buildGhostRecord } from "./07-ghost/ghost.topic.ts";
import { formatReport, parseReport } from "./08-report/report.records.ts";
import { buildDnsRecord } from "./09-kube-dns/kube-dns.topic.ts";
import { buildWireRecord } from "./12-vxlan/vxlan.topic.ts";

/** An output WRITTEN BY US, as if recorded at raw/test/<name>.txt, with its parse. */
function fixture<T>(name: string, text: string, parse: (t: string) => T): Read<T> {
  return read(RawText.of(text, { file: `raw/test/${name}.txt` }), parse);
}

const status = fixture(
  "status",
  "KubeProxyReplacement:    True   [eth0   172.18.0.3 (Direct Routing)]\nKubeProxyReplacement Details:\n  Socket LB:              Enabled\n  Socket LB Coverage:     Full\n",
  parseStatus,
);
const services = fixture(
  "services",
  JSON.stringify(
    [
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
    ],
    null,
    2,
  ),
  parseServiceListJson,
);
const lb = fixture(
  "lb",
  [
    "10.96.44.2:80/TCP (0)   0.0.0.0:0 (7) (0) [ClusterIP, non-routable] ",
    "10.96.44.2:80/TCP (2)   10.244.2.9:8080/TCP (7) (2)",
    "10.96.44.2:80/TCP (1)   10.244.1.7:8080/TCP (7) (1)",
  ].join("\n"),
  parseBpfLbList,
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
    const r = buildIptablesRecord({
      iptablesSave: RawText.of(save, { file: "raw/test/iptables-save.txt" }),
      clusterIp: "10.96.0.1",
      status,
    });
    expect(r.record).toEqual({
      cluster_ip: "10.96.0.1",
      kube_svc_lines: 2,
      cluster_ip_lines: 1,
      cilium_lines: 1,
      kube_proxy_replacement: "True",
    });
    // each counted line is quoted verbatim at its place
    expect(r.evidence.cluster_ip_lines).toEqual([
      {
        quote: "-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -j KUBE-SVC-AAA",
        at: { file: "raw/test/iptables-save.txt", line: 1 },
      },
    ]);
    expect(r.evidence.kube_proxy_replacement).toEqual([
      {
        quote: "KubeProxyReplacement:    True   [eth0   172.18.0.3 (Direct Routing)]",
        at: { file: "raw/test/status.txt", line: 1 },
      },
    ]);
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
    // the slots are the bpf lb list rows themselves, not rebuilt text
    expect(r.evidence.backends).toEqual([
      {
        quote: "10.96.44.2:80/TCP (1)   10.244.1.7:8080/TCP (7) (1)",
        at: { file: "raw/test/lb.txt", line: 3 },
      },
      {
        quote: "10.96.44.2:80/TCP (2)   10.244.2.9:8080/TCP (7) (2)",
        at: { file: "raw/test/lb.txt", line: 2 },
      },
    ]);
    expect(r.evidence.service_id?.[0]).toEqual({
      quote: '      "id": 12,',
      at: { file: "raw/test/services.txt", line: expect.any(Number) },
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
    const ctLine =
      "TCP OUT 10.244.1.5:40404 -> 10.244.2.9:8080 expires=1 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=7 SourceSecurityID=0 BackendID=2 ";
    const r = buildCtRecord({
      holderIp: "10.244.1.5",
      sourcePort: 40404,
      holderLog: RawText.of(
        '{"event":"alive"}\n{"event":"connected","local":"10.244.1.5:40404","peer":"10.96.44.2:80"}\n{"event":"alive"}\n',
        { file: "raw/test/log.txt" },
      ),
      holderNetstat: fixture(
        "netstat",
        "tcp        0      0 10.244.1.5:40404        10.244.2.9:8080         ESTABLISHED",
        parseNetstat,
      ),
      ct: fixture(
        "ct",
        `TCP IN 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=0 Bytes=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0\n${ctLine}`,
        parseBpfCtList,
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
    expect(r.evidence.backend).toEqual([{ quote: ctLine, at: { file: "raw/test/ct.txt", line: 2 } }]);
    expect(r.evidence.app_peer?.[0]).toMatchObject({ at: { file: "raw/test/log.txt", line: 2 } });
    // no SVC entry: an absence, derived from the whole output it was looked for in
    expect(r.evidence.svc_entries).toEqual([
      { derived: "no TCP SVC entry from port 40404", from: [{ file: "raw/test/ct.txt" }] },
    ]);
  });

  it("prog.json: device from the endpoint, attach and program from bpftool, policy map by id", () => {
    const r = buildProgRecord({
      endpointId: 1234,
      endpoint: fixture(
        "endpoint",
        JSON.stringify(
          [{ id: 1234, status: { networking: { "interface-name": "lxcab", "interface-index": 17 } } }],
          null,
          2,
        ),
        parseEndpointJson,
      ),
      bpftool: fixture(
        "bpftool",
        "xdp:\n\ntc:\nlxcab(17) tcx/ingress cil_from_container prog_id 4773 link_id 29 \n\nflow_dissector:\n",
        parseBpftoolNet,
      ),
      tcFilter: fixture("tc", "", parseTcFilter),
      maps: fixture(
        "maps",
        "Name   Num entries   Num errors   Cache enabled\ncilium_policy_v2_01234   3   0   true",
        parseMapList,
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
    expect(r.evidence.attach).toEqual([
      {
        quote: "lxcab(17) tcx/ingress cil_from_container prog_id 4773 link_id 29 ",
        at: { file: "raw/test/bpftool.txt", line: 4 },
      },
    ]);
    expect(r.evidence.interface).toEqual([
      { quote: '        "interface-name": "lxcab",', at: { file: "raw/test/endpoint.txt", line: 6 } },
    ]);
    expect(r.evidence.tc_filter_lines).toEqual([
      { derived: "tc printed nothing: 0 lines", from: [{ file: "raw/test/tc.txt" }] },
    ]);
  });

  it("ghost.json from the service list, curl and config", () => {
    const curl = curlRead({
      exitCode: 7,
      stdout: "http_code=000 time_total=0.004",
      stderr:
        "*   Trying 10.96.44.3:80...\n* Immediate connect fail for 10.96.44.3: No route to host\ncurl: (7) Failed to connect to 10.96.44.3 port 80 after 0 ms: Couldn't connect to server\n",
      durationMs: 5,
      recorded: { topic: "ghost", seq: 6, stdoutFile: "raw/ghost/006-curl.txt", at: 0 },
    });
    const r = buildGhostRecord({
      clusterIp: "10.96.44.3",
      port: 80,
      services,
      curl,
      config: fixture("config", "ServiceNoBackendResponse          : reject", parseConfig),
    });
    expect(r.record).toEqual({
      cluster_ip: "10.96.44.3",
      backends: 0,
      curl_exit: 7,
      seconds: 0.004,
      no_backend_response: "reject",
    });
    // the write-out line in raw/, curl's own line and the line that decides the errno in the call's stderr
    expect(r.evidence.curl_exit).toEqual([
      { quote: "http_code=000 time_total=0.004", at: { file: "raw/ghost/006-curl.txt", line: 1 } },
      {
        quote: "curl: (7) Failed to connect to 10.96.44.3 port 80 after 0 ms: Couldn't connect to server",
        at: { file: "calls/ghost.jsonl", call: 6, stream: "stderr", line: 3 },
      },
      {
        quote: "* Immediate connect fail for 10.96.44.3: No route to host",
        at: { file: "calls/ghost.jsonl", call: 6, stream: "stderr", line: 2 },
      },
    ]);
    expect(buildErrnoFacts(curl)).toEqual({
      record: { ghost_errno: "EHOSTUNREACH" },
      evidence: {
        ghost_errno: [
          {
            quote: "* Immediate connect fail for 10.96.44.3: No route to host",
            at: { file: "calls/ghost.jsonl", call: 6, stream: "stderr", line: 2 },
          },
        ],
      },
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
      iptables: fixture("iptables-save", dump, parseIptablesSave),
      namespace: "cca-dp",
      slices: fixture("slices", '{"items":[]}', parseEndpointSliceJson),
      pods: [],
      targetPort: 8080,
    });
    expect(facts.record.web_sep_chains).toBe(2);
    // the chains by their declaration lines
    expect(facts.evidence.web_sep_chains).toEqual([
      { quote: ":KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]", at: { file: "raw/test/iptables-save.txt", line: 2 } },
      { quote: ":KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]", at: { file: "raw/test/iptables-save.txt", line: 3 } },
    ]);
  });
});

describe("kube-dns record (EndpointSlice and service list written by us in kubectl's and cilium-dbg's layouts)", () => {
  it("labels each endpoint with the CoreDNS Pod it names (targetRef), not with the EndpointSlice's name", () => {
    const slices = fixture(
      "slices",
      JSON.stringify(
        {
          apiVersion: "v1",
          kind: "List",
          items: [
            {
              addressType: "IPv4",
              endpoints: [
                {
                  addresses: ["10.244.0.229"],
                  conditions: { ready: true },
                  targetRef: { kind: "Pod", name: "coredns-7d764666f9-c9zcx", namespace: "kube-system" },
                },
                {
                  addresses: ["10.244.0.218"],
                  conditions: { ready: true },
                  targetRef: { kind: "Pod", name: "coredns-7d764666f9-2n8k5", namespace: "kube-system" },
                },
              ],
              kind: "EndpointSlice",
              metadata: { name: "kube-dns-x7h2p", namespace: "kube-system" },
              ports: [{ name: "dns", port: 53, protocol: "UDP" }],
            },
          ],
        },
        null,
        4,
      ),
      parseEndpointSliceJson,
    );
    const dnsServices = fixture(
      "dns-services",
      JSON.stringify(
        [
          {
            spec: {
              id: 2,
              "frontend-address": { ip: "10.96.0.10", port: 53, protocol: "UDP", scope: "external" },
              flags: { type: "ClusterIP", namespace: "kube-system", name: "kube-dns" },
              "backend-addresses": [
                { ip: "10.244.0.218", port: 53, protocol: "UDP", state: "active" },
                { ip: "10.244.0.229", port: 53, protocol: "UDP", state: "active" },
              ],
            },
          },
        ],
        null,
        2,
      ),
      parseServiceListJson,
    );
    const r = buildDnsRecord({
      clusterIp: "10.96.0.10",
      port: 53,
      protocol: "UDP",
      services: dnsServices,
      slices,
      iptables: fixture("iptables-save", "*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n", parseIptablesSave),
    });
    expect(r.record.endpointslice_ready).toEqual(["10.244.0.218:53", "10.244.0.229:53"]);
    const shown = (r.evidence.endpointslice_ready ?? []).map((e) =>
      "quote" in e ? e.quote.trim() : e.derived,
    );
    expect(shown).toEqual([
      '"10.244.0.229"',
      '"ready": true',
      '"name": "coredns-7d764666f9-c9zcx",',
      '"10.244.0.218"',
      '"ready": true',
      '"name": "coredns-7d764666f9-2n8k5",',
    ]);
    expect(shown.join("\n")).not.toContain("kube-dns-x7h2p");
    expect(r.evidence.kube_proxy_rules).toEqual([
      {
        derived: "no rule commented kube-system/kube-dns:dns",
        from: [{ file: "raw/test/iptables-save.txt" }],
      },
    ]);
  });
});

describe("vxlan topic, native routing: the client's queries on the wire device", () => {
  const route = fixture(
    "ip-route-get",
    "10.244.2.17 via 172.18.0.4 dev eth0 src 172.18.0.3 uid 0 \n    cache \n",
    parseIpRoute,
  );
  const capture = (lines: string[]) =>
    fixture(
      "tcpdump",
      [
        "tcpdump: verbose output suppressed, use -v[v]... for full protocol decode",
        "listening on eth0, link-type EN10MB (Ethernet), snapshot length 262144 bytes",
        ...lines,
      ].join("\n"),
      parseTcpdump,
    );
  const query = (dst: string) =>
    `14:31:02.123456 IP 10.244.1.9.41000 > ${dst}.53: 4660+ A? kubernetes.default.svc.cluster.local. (55)`;
  const build = (lines: string[]) =>
    buildWireRecord({
      clusterIp: "10.96.0.10",
      backend: "10.244.2.17:53",
      device: "eth0",
      route,
      capture: capture(lines),
    });

  it("queries to the backend, no tunnel packet: destinations, the route line and each first packet quoted", () => {
    const r = build([query("10.244.2.17"), query("10.244.2.17"), query("10.244.2.30")]);
    expect(r.record.wire).toEqual({
      device: "eth0",
      packets: 3,
      encapsulated: 0,
      destinations: ["10.244.2.17:53", "10.244.2.30:53"],
    });
    const quoted = (r.evidence.wire ?? []).flatMap((e) => ("quote" in e ? [e.quote.trim()] : []));
    expect(quoted[0]).toMatch(/^10\.244\.2\.17 via 172\.18\.0\.4 dev eth0/);
    expect(quoted.slice(1)).toEqual([query("10.244.2.17"), query("10.244.2.30")]);
  });

  it("a tunnel packet on the device is counted as encapsulation and quoted", () => {
    const tunnel = "14:31:02.200000 IP 172.18.0.3.41234 > 172.18.0.4.8472: UDP, length 105";
    const r = build([tunnel]);
    expect(r.record.wire).toMatchObject({ packets: 0, encapsulated: 1, destinations: [] });
    expect(r.record.packets).toBe(1);
    const quoted = (r.evidence.wire ?? []).flatMap((e) => ("quote" in e ? [e.quote.trim()] : []));
    expect(quoted).toContain(tunnel);
  });
});
