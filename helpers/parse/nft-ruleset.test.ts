/**

 * `nft list ruleset` and kube-proxy's nftables mode. The fixture file is WRITTEN BY US from Kubernetes v1.35.5's
 * pkg/proxy/nftables/proxier.go and printed by nft 1.0.6 (its header says how); the small inline ones are written
 * by us in nft's layout.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ParseError } from "../errors.ts";
import { withNotes } from "./lines.ts";
import { kubeProxyNft, parseNftRuleset, servicePorts } from "./nft-ruleset.ts";

const FIXTURE = readFileSync(
  join(import.meta.dirname, "testdata", "nft-ruleset-kube-proxy-1.35.5.txt"),
  "utf8",
);
const LINES = FIXTURE.split("\n");
/** 1-based line of the first line containing `s` (after line `after`). */
const lineOf = (s: string, after = 0): number => LINES.findIndex((l, i) => i >= after && l.includes(s)) + 1;

describe("nft list ruleset", () => {
  const rs = parseNftRuleset(FIXTURE);

  it("reads every table: the iptables-nft ones and kube-proxy's per family", () => {
    expect(rs.tables.map((t) => `${t.family} ${t.name}`)).toEqual([
      "ip mangle",
      "ip raw",
      "ip filter",
      "ip nat",
      "ip kube-proxy",
      "ip6 kube-proxy",
    ]);
    const kp = rs.tables[4];
    expect(kp?.comment).toBe("rules for kube-proxy");
    expect(kp?.line).toBe(lineOf("table ip kube-proxy {"));
  });

  it("base chains keep their hook line, priority as printed (named or numeric)", () => {
    const kp = rs.tables[4];
    expect(kp?.chains.find((c) => c.name === "filter-prerouting-pre-dnat")?.hook).toMatchObject({
      type: "filter",
      hook: "prerouting",
      priority: "dstnat - 10",
      policy: "accept",
    });
    expect(kp?.chains.find((c) => c.name === "nat-output")?.hook?.priority).toBe("-100");
    expect(kp?.chains.find((c) => c.name === "services")?.hook).toBeNull();
    expect(kp?.chains.find((c) => c.name === "reject-chain")?.comment).toBe(
      "helper for @no-endpoint-services / @no-endpoint-nodeports",
    );
  });

  it("rules keep their line, counter and comment (iptables-nft rules carry counters)", () => {
    const nat = rs.tables.find((t) => t.name === "nat");
    const pre = nat?.chains.find((c) => c.name === "PREROUTING");
    expect(pre?.rules[0]).toMatchObject({
      text: "counter packets 0 bytes 0 jump CILIUM_PRE_nat",
      counter: { packets: 0, bytes: 0 },
      line: lineOf("jump CILIUM_PRE_nat", lineOf("table ip nat {")),
    });
    const check = rs.tables[4]?.chains.find((c) => c.name === "cluster-ips-check");
    expect(check?.rules.map((r) => [r.comment, r.counter])).toEqual([
      ["Reject traffic to invalid ports of ClusterIPs", null],
      ["Drop traffic to unallocated ClusterIPs", null],
    ]);
  });

  it("set and map elements over several lines, each at the line it starts on", () => {
    const kp = rs.tables[4];
    const ips = kp?.sets.find((s) => s.name === "service-ips");
    expect(ips).toMatchObject({ kind: "map", type: "ipv4_addr . inet_proto . inet_service : verdict" });
    expect(ips?.elements).toHaveLength(6);
    const dns = ips?.elements.find((e) => e.key.join(" ") === "10.96.0.10 udp 53");
    expect(dns?.value).toBe("goto service-FY5PMXPG-kube-system/kube-dns/udp/dns");
    expect(dns?.line).toBe(lineOf("10.96.0.10 . udp . 53 :"));
    const ne = kp?.sets.find((s) => s.name === "no-endpoint-services")?.elements;
    expect(ne?.map((e) => [e.key, e.comment, e.value])).toEqual([
      [["10.96.9.44", "tcp", "80"], "cca-dp/ghost-np:http", "goto reject-chain"],
      [["10.96.183.195", "tcp", "80"], "cca-dp/ghost:http", "goto reject-chain"],
    ]);
    const cips = kp?.sets.find((s) => s.name === "cluster-ips");
    expect(cips?.kind).toBe("set");
    expect(cips?.elements.map((e) => e.key[0])).toContain("10.96.183.195");
    expect(cips?.elements.map((e) => e.value)).toEqual(Array(6).fill(null));
  });

  it("empty output (an empty ruleset prints nothing) is no table, not an error", () => {
    expect(parseNftRuleset("")).toEqual({ tables: [] });
  });

  it("the iptables-nft warning (stderr, when merged) is skipped", () => {
    const rs2 = parseNftRuleset(
      "# Warning: table ip nat is managed by iptables-nft, do not touch!\ntable ip nat {\n\tchain KUBE-KUBELET-CANARY {\n\t}\n}",
    );
    expect(rs2.tables[0]?.chains.map((c) => c.name)).toEqual(["KUBE-KUBELET-CANARY"]);
  });
});

describe("kube-proxy nftables mode: one record per Service port and family", () => {
  const kp = kubeProxyNft(parseNftRuleset(FIXTURE));

  it("finds both kube-proxy tables", () => {
    expect(kp.tables.map((t) => t.family)).toEqual(["ip", "ip6"]);
  });

  it("a ClusterIP Service: its ClusterIP, port and both endpoints, each at its dnat line", () => {
    const [web] = servicePorts(kp, "cca-dp", "web");
    expect(web).toMatchObject({
      family: "ipv4",
      protocol: "tcp",
      portName: "http",
      clusterIP: "10.96.47.26",
      port: 80,
      nodePort: null,
      chain: "service-ZF4NGCZL-cca-dp/web/tcp/http",
      noEndpoints: [],
    });
    expect(web?.endpoints.map((e) => `${e.ip}:${e.port}`)).toEqual(["10.244.1.138:8080", "10.244.2.75:8080"]);
    expect(web?.endpoints[0]?.line).toBe(lineOf("dnat to 10.244.1.138:8080"));
    expect(LINES[(web?.endpoints[1]?.line ?? 0) - 1]).toContain("dnat to 10.244.2.75:8080");
    expect(web?.lines).toContain(lineOf("10.96.47.26 . tcp . 80 : goto"));
  });

  it("a NodePort Service: the NodePort from service-nodeports, per family", () => {
    const np = servicePorts(kp, "cca-dp", "web-np");
    expect(np.map((s) => [s.family, s.clusterIP, s.port, s.nodePort, s.endpoints.length])).toEqual([
      ["ipv4", "10.96.201.7", 80, 30780, 2],
      ["ipv6", "fd00:10:96::2f1a", 80, 30780, 2],
    ]);
    expect(np[1]?.endpoints.map((e) => e.ip)).toEqual(["fd00:10:244:1::8a", "fd00:10:244:2::4b"]);
  });

  it("a Service without endpoints: no chain, the reject element where the ClusterIP and NodePort are", () => {
    const [ghost] = servicePorts(kp, "cca-dp", "ghost");
    expect(ghost).toMatchObject({
      clusterIP: "10.96.183.195",
      port: 80,
      chain: null,
      endpoints: [],
      noEndpoints: [
        {
          on: "ip",
          address: "10.96.183.195",
          port: 80,
          verdict: "reject",
          line: lineOf('"cca-dp/ghost:http"'),
        },
      ],
    });
    const [ghostNp] = servicePorts(kp, "cca-dp", "ghost-np");
    expect(ghostNp?.nodePort).toBe(30781);
    expect(ghostNp?.noEndpoints.map((n) => [n.on, n.port, n.verdict])).toEqual([
      ["ip", 80, "reject"],
      ["nodeport", 30781, "reject"],
    ]);
  });

  it("kube-dns: three ports, UDP and TCP, each its own record", () => {
    const dns = servicePorts(kp, "kube-system", "kube-dns").filter((s) => s.family === "ipv4");
    expect(dns.map((s) => `${s.protocol}/${s.portName}:${s.port}`).sort()).toEqual([
      "tcp/dns-tcp:53",
      "tcp/metrics:9153",
      "udp/dns:53",
    ]);
  });

  it("a ruleset without kube-proxy's tables: nothing found (not an error)", () => {
    const none = kubeProxyNft(parseNftRuleset("table ip nat {\n\tchain POSTROUTING {\n\t}\n}"));
    expect(none).toEqual({ tables: [], services: [] });
  });

  it("a drop verdict (Local policy without local endpoints) and an unnamed port", () => {
    const rs = parseNftRuleset(
      [
        "table ip kube-proxy {",
        "\tmap no-endpoint-services {",
        "\t\ttype ipv4_addr . inet_proto . inet_service : verdict",
        '\t\telements = { 10.96.5.5 . tcp . 8080 comment "ns1/svc1" : drop }',
        "\t}",
        "}",
      ].join("\n"),
    );
    expect(kubeProxyNft(rs).services[0]).toMatchObject({
      namespace: "ns1",
      name: "svc1",
      portName: "",
      clusterIP: null,
      noEndpoints: [{ on: "ip", address: "10.96.5.5", port: 8080, verdict: "drop", line: 4 }],
    });
  });
});

describe("bad input: one error naming the line, never a confident record", () => {
  it("every cut-off of the fixture is an error, or (cut between tables) a prefix of the whole", () => {
    const whole = kubeProxyNft(parseNftRuleset(FIXTURE)).services;
    const key = (s: {
      family: string;
      namespace: string;
      name: string;
      protocol: string;
      portName: string;
    }) => `${s.family}/${s.namespace}/${s.name}/${s.protocol}/${s.portName}`;
    const byKey = new Map(whole.map((s) => [key(s), s]));
    let errors = 0;
    let wholeTables = 0;
    for (let n = 1; n < LINES.length; n++) {
      const cut = LINES.slice(0, n).join("\n");
      let got: ReturnType<typeof kubeProxyNft>;
      try {
        got = kubeProxyNft(parseNftRuleset(cut));
      } catch (err) {
        expect(err).toBeInstanceOf(ParseError);
        expect((err as ParseError).line).toBeGreaterThan(0);
        expect((err as ParseError).line).toBeLessThanOrEqual(n);
        errors++;
        continue;
      }
      // it parsed: then it ended exactly after a table, and every record equals the whole file's
      expect(
        LINES[n - 1]?.trim() === "}" || LINES.slice(0, n).every((l) => l.trim() === "" || l.startsWith("#")),
      ).toBe(true);
      for (const s of got.services) expect(s).toEqual(byKey.get(key(s)));
      wholeTables++;
    }
    expect(errors).toBeGreaterThan(500);
    expect(wholeTables).toBeLessThan(20);
  });

  it("the message names the block left open", () => {
    const cut = LINES.slice(0, lineOf("chain service-ZF4NGCZL-cca-dp/web/tcp/http {") + 1).join("\n");
    expect(() => parseNftRuleset(cut)).toThrow(
      /^nft-ruleset: line \d+: input ends inside chain service-ZF4NGCZL-cca-dp\/web\/tcp\/http opened at line \d+ \(cut off\?\)/,
    );
    const inElements = LINES.slice(0, lineOf("10.96.9.44, 10.96.47.26,")).join("\n");
    expect(() => parseNftRuleset(inElements)).toThrow(/input ends inside the statement begun at line \d+/);
  });

  it("garbage at the top, in a table, in a chain or in a map names its line", () => {
    // binary input is refused by the shared line checks (helpers/parse/lines.ts) before the grammar sees it
    expect(() => parseNftRuleset("\u0000\u0001binary")).toThrow(/^nft-ruleset: line 1: binary data/);
    expect(() => parseNftRuleset("tables galore")).toThrow(
      /^nft-ruleset: line 1: expected `table <family> <name> \{`/,
    );
    expect(() => parseNftRuleset("iptables v1.8.9: command not found")).toThrow(/^nft-ruleset: line 1:/);
    expect(() => parseNftRuleset("table ip t {\n\t%%%\n}")).toThrow(
      /^nft-ruleset: line 2: expected a chain, set, map/,
    );
    expect(() => parseNftRuleset("table ip t {\n\tchain c {\n\t\t;;; junk\n\t}\n}")).toThrow(
      /^nft-ruleset: line 3: not an nft statement in chain c/,
    );
    expect(() =>
      parseNftRuleset(
        "table ip t {\n\tmap m {\n\t\ttype inet_service : verdict\n\t\telements = { 80 }\n\t}\n}",
      ),
    ).toThrow(/^nft-ruleset: line 4: a map element without ` : value`/);
    expect(() => parseNftRuleset("}\n")).toThrow(/^nft-ruleset: line 1: `\}` with no open table/);
    expect(() => parseNftRuleset("table ip a {\ntable ip b {\n}\n}")).toThrow(
      /line 2: a table inside a table/,
    );
  });

  it("a kube-proxy element pointing at a chain that is not there is an error at the element", () => {
    const rs = parseNftRuleset(
      [
        "table ip kube-proxy {",
        "\tmap service-ips {",
        "\t\ttype ipv4_addr . inet_proto . inet_service : verdict",
        "\t\telements = { 10.96.0.7 . tcp . 80 : goto service-ABCDEFGH-ns/svc/tcp/http }",
        "\t}",
        "}",
      ].join("\n"),
    );
    expect(() => kubeProxyNft(rs)).toThrow(
      /^nft-ruleset: line 4: the service chain this element names is not in the table/,
    );
  });

  it("a human's elision inside a table is skipped and counted", () => {
    const at = lineOf("chain mark-for-masquerade {");
    const elided = [...LINES.slice(0, at - 1), "\t...", ...LINES.slice(at - 1)].join("\n");
    const { value, notes } = withNotes(() => parseNftRuleset(elided));
    expect(notes.elided).toEqual([at]);
    expect(value.tables).toHaveLength(6);
  });
});

describe("on a real cluster's output (kube-proxy v1.35.5 in nftables mode, the kp-nftables bundle)", () => {
  const file = join(
    import.meta.dirname,
    "..",
    "..",
    "suites",
    "bundles",
    "profiles",
    "kp-nftables",
    "kube-proxy",
    "raw",
    "config",
    "008-nft-list-ruleset.txt.gz",
  );
  it("finds kube-proxy's tables and kube-dns with its ClusterIP and CoreDNS endpoints", () => {
    if (!existsSync(file)) return;
    const rs = parseNftRuleset(gunzipSync(readFileSync(file)).toString("utf8"));
    const kp = kubeProxyNft(rs);
    expect(kp.tables.map((t) => t.family)).toContain("ip");
    const dns = kp.services.filter((s) => s.namespace === "kube-system" && s.name === "kube-dns");
    expect(dns.map((s) => `${s.protocol}/${s.port}`).sort()).toEqual(["tcp/53", "tcp/9153", "udp/53"]);
    for (const s of dns) {
      expect(s.clusterIP).toBe("10.96.0.10");
      expect(s.endpoints.length).toBe(2);
    }
  });
});
