/**
 * The datapath configuration record, on every shipped bundle's real outputs (1.18, 1.19, 1.20 × kpr and
 * kube-proxy), on the real samples in ../shared/samples (skipped when absent), and on fixtures WRITTEN BY US for
 * the configurations no bundle has yet (native routing + BPF host routing + BPF masquerade, socket LB
 * host-namespace-only, DSR + Maglev, netkit): each is a real 1.20.2 `status --verbose` (suites/bundles/1.20/kpr,
 * raw/report/008) with only the lines pkg/client/client.go prints differently for that setting changed.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readRawFile } from "../exec/raw-file.ts";
import { SAMPLES_SKIP_REASON, samplesAvailable, samplesFor } from "../samples.ts";
import {
  buildDatapathConfig,
  type DatapathConfig,
  formatDatapathConfig,
  unreadSettings,
} from "./datapath-config.ts";
import { derive, isQuote, RawText } from "./evidence.ts";

const BUNDLES = join(import.meta.dirname, "..", "..", "suites", "bundles");

function rawOf(dir: string, pattern: RegExp): RawText | undefined {
  const report = join(dir, "raw", "report");
  if (!existsSync(report)) return undefined;
  const name = readdirSync(report).find((f) => pattern.test(f));
  return name ? RawText.of(readRawFile(join(report, name)), { file: `raw/report/${name}` }) : undefined;
}

const values = (c: DatapathConfig) => Object.fromEntries(Object.entries(c).map(([k, s]) => [k, s.value]));

const BUNDLE_DIRS = ["1.18", "1.19", "1.20"].flatMap((v) =>
  ["kpr", "kube-proxy"].map((m) => ({ v, m, dir: join(BUNDLES, v, m) })),
);

describe("the shipped bundles (real status --verbose and config -a)", () => {
  it.each(BUNDLE_DIRS)("$v/$m", ({ m, dir }) => {
    const status = rawOf(dir, /cilium-dbg-status-verbose/);
    const config = rawOf(dir, /cilium-dbg-config-a/);
    expect(status).toBeDefined();
    expect(config).toBeDefined();
    const c = buildDatapathConfig({ status, config });
    expect(values(c)).toEqual({
      routing: "tunnel",
      tunnelProtocol: "vxlan",
      hostRouting: "legacy",
      masquerading: "iptables",
      socketLB: m === "kpr" ? "on" : "off",
      lbMode: m === "kpr" ? "snat" : null,
      lbAlgorithm: m === "kpr" ? "random" : null,
      deviceMode: "veth",
      kubeProxy: null,
      ipFamilies: ["ipv4"],
    });
    // every read field quotes the raw line it came from, verbatim
    const lines = (status?.text ?? "").split("\n");
    expect(c.routing.evidence).toEqual([
      {
        quote: lines.find((l) => l.startsWith("Routing:")),
        at: {
          file: "raw/report/008-cilium-dbg-status-verbose.txt.gz",
          line: lines.findIndex((l) => l.startsWith("Routing:")) + 1,
        },
      },
    ]);
    expect(c.socketLB.evidence.map((e) => (isQuote(e) ? e.quote.trim().split(/\s+/)[0] : ""))).toEqual([
      "Socket",
      "Socket",
    ]);
    expect(c.ipFamilies.source).toBe("config");
    if (m === "kube-proxy") {
      expect(c.lbMode.note).toMatch(/^KubeProxyReplacement False: no BPF NodePort/);
      expect(c.lbMode.unknown).toBeUndefined();
    }
    // kube-proxy's mode was never recorded in these bundles: unknown with the reason, never guessed
    expect(c.kubeProxy.unknown).toMatch(/^kube-proxy: neither kube-proxy's \/proxyMode/);
    expect(unreadSettings(c).map((u) => u.field)).toEqual(["kubeProxy"]);
  });

  it("config -a alone (no status): the fields it holds, the others unknown with the reason", () => {
    const config = rawOf(join(BUNDLES, "1.20", "kpr"), /cilium-dbg-config-a/);
    const c = buildDatapathConfig({ config });
    expect(c.routing).toMatchObject({ value: "tunnel", source: "config" });
    expect(c.hostRouting).toMatchObject({ value: "legacy", source: "config" });
    // 1.20.2 prints it under UnsafeDaemonConfigOption as "Enabled"
    expect(
      isQuote(c.hostRouting.evidence[0] as never) && (c.hostRouting.evidence[0] as { quote: string }).quote,
    ).toMatch(/^\tEnableHostLegacyRouting\s+: Enabled$/);
    expect(c.masquerading).toMatchObject({ value: "iptables", source: "config" });
    expect(c.deviceMode).toMatchObject({ value: "veth", source: "config" });
    expect(c.tunnelProtocol.unknown).toMatch(/config -a prints no tunnel protocol/);
    expect(c.socketLB.unknown).toMatch(/no cilium-dbg status was read.*config -a has no socket LB switch/);
    expect(c.lbMode.unknown).toBeDefined();
    expect(formatDatapathConfig(c)).toBe(
      "routing tunnel/?, host legacy, masquerading iptables, socket LB ?, LB ?/?, device veth, kube-proxy ?, families ipv4",
    );
  });
});

describe.skipIf(!samplesAvailable)(
  samplesAvailable ? "real samples in ../shared/samples" : `real samples (skipped: ${SAMPLES_SKIP_REASON})`,
  () => {
    it("status-verbose samples: every field they print is read, with its line", () => {
      const all = samplesFor("status-verbose");
      expect(all.length).toBeGreaterThan(0);
      for (const s of all) {
        const c = buildDatapathConfig({
          status: RawText.of(s.output, { file: `samples/status-verbose/${s.name}` }),
        });
        if (s.name.startsWith("1-kkamji")) {
          // Cilium 1.17.5, native routing with BPF host routing and BPF masquerade (the blog's tuned install)
          expect(values(c)).toMatchObject({
            routing: "native",
            tunnelProtocol: null,
            hostRouting: "bpf",
            masquerading: "bpf",
            socketLB: "on",
            lbMode: "snat",
            lbAlgorithm: "random",
            deviceMode: "veth",
          });
          expect(c.tunnelProtocol.note).toBe("native routing: no tunnel");
        }
        for (const f of ["routing", "hostRouting", "masquerading", "socketLB"] as const)
          for (const e of c[f].evidence)
            expect(isQuote(e) && s.output.split("\n")[e.at.line - 1]).toBe(isQuote(e) && e.quote);
      }
    });

    it("status samples (plain `status`): socket LB and LB lines are unknown, named as such", () => {
      for (const s of samplesFor("status")) {
        const c = buildDatapathConfig({ status: RawText.of(s.output, { file: s.name }) });
        if (c.socketLB.unknown)
          expect(c.socketLB.unknown).toMatch(/status has no KubeProxyReplacement Details|status:/);
      }
    });

    it("the config-all sample (read-write section only): every field unknown with its reason", () => {
      for (const s of samplesFor("config-all")) {
        const c = buildDatapathConfig({ config: RawText.of(s.output, { file: s.name }) });
        expect(c.routing.unknown).toMatch(/config -a has no RoutingMode/);
        expect(c.ipFamilies.unknown).toMatch(/config -a lacks EnableIPv4/);
      }
    });
  },
);

/** The 1.20.2 kpr status with lines replaced: written by us, from client.go's formats. */
function statusWith(replace: Record<string, string>, drop: string[] = []): RawText {
  const base = rawOf(join(BUNDLES, "1.20", "kpr"), /cilium-dbg-status-verbose/) as RawText;
  const lines = base.text
    .split("\n")
    .filter((l) => !drop.some((d) => l.trimStart().startsWith(d)))
    .map((l) => {
      for (const [prefix, line] of Object.entries(replace)) if (l.trimStart().startsWith(prefix)) return line;
      return l;
    });
  return RawText.of(lines.join("\n"), { file: "(written by us)" });
}

describe("configurations no bundle has yet (fixtures written by us from pkg/client/client.go)", () => {
  it("native routing, BPF host routing, BPF masquerade", () => {
    const c = buildDatapathConfig({
      status: statusWith({
        "Routing:": "Routing:                Network: Native   Host: BPF",
        "Masquerading:":
          "Masquerading:           BPF   [eth0]   10.244.0.0/16 [IPv4: Enabled, IPv6: Disabled]",
      }),
    });
    expect(values(c)).toMatchObject({
      routing: "native",
      tunnelProtocol: null,
      hostRouting: "bpf",
      masquerading: "bpf",
    });
  });

  it("socket LB host-namespace-only", () => {
    const c = buildDatapathConfig({
      status: statusWith({ "Socket LB Coverage:": "  Socket LB Coverage:   Hostns-only" }),
    });
    expect(c.socketLB).toMatchObject({ value: "hostns-only", source: "status" });
    expect(c.socketLB.evidence.map((e) => (isQuote(e) ? e.quote : ""))).toEqual([
      "  Socket LB:            Enabled",
      "  Socket LB Coverage:   Hostns-only",
    ]);
  });

  it("DSR with Maglev (native routing: vxlan refuses DSR)", () => {
    const c = buildDatapathConfig({
      status: statusWith({
        "Routing:": "Routing:                Network: Native   Host: BPF",
        "Mode:": "  Mode:                 DSR\n    DSR Dispatch Mode:  IP Option/Extension",
        "Backend Selection:": "  Backend Selection:    Maglev (Table Size: 16381)",
      }),
    });
    expect(values(c)).toMatchObject({ lbMode: "dsr", lbAlgorithm: "maglev" });
    expect(c.lbAlgorithm.evidence.map((e) => (isQuote(e) ? e.quote : ""))).toEqual([
      "  Backend Selection:    Maglev (Table Size: 16381)",
    ]);
  });

  it("Hybrid, netkit, dual-stack IPAM", () => {
    const c = buildDatapathConfig({
      status: statusWith({
        "Mode:": "  Mode:                 Hybrid",
        "Device Mode:": "Device Mode:            netkit [Configured: netkit]",
        "IPAM:":
          "IPAM:                   IPv4: 6/254 allocated from 10.244.1.0/24, IPv6: 6/18446744073709551614 allocated from fd00:10:244:1::/64",
      }),
    });
    expect(values(c)).toMatchObject({ lbMode: "hybrid", deviceMode: "netkit", ipFamilies: ["ipv4", "ipv6"] });
    expect(c.ipFamilies.source).toBe("status");
  });

  it("a status line it cannot read is unknown with the line, not a guess", () => {
    const c = buildDatapathConfig({
      status: statusWith({ "Routing:": "Routing:                Network: Quantum   Host: Warp" }),
    });
    expect(c.routing.unknown).toMatch(/^routing: status: unknown routing "Network: Quantum Host: Warp"/);
    expect(c.hostRouting.unknown).toMatch(/status has no readable `Routing:` line/);
    expect(() => formatDatapathConfig(c)).not.toThrow();
  });

  it("garbage status: every status field unknown, naming the parse error's line", () => {
    const c = buildDatapathConfig({ status: RawText.of("\u0000\u0001 garbage", { file: "x" }) });
    // the parse error's first line names the line (the shared line checks refuse binary data first)
    expect(c.routing.unknown).toMatch(/^routing: status: status: line 1: /);
  });

  it("plain `status` (not --verbose): socket LB, LB mode and algorithm unknown, naming why", () => {
    const c = buildDatapathConfig({
      status: statusWith({}, [
        "KubeProxyReplacement Details:",
        "Socket LB",
        "Mode:",
        "Backend Selection:",
        "Status:",
      ]),
    });
    expect(c.socketLB.unknown).toMatch(/status has no KubeProxyReplacement Details/);
    expect(c.lbMode.unknown).toMatch(/status has no `Mode:` line/);
  });
});

describe("the ConfigMaps: cilium-config (what was asked) and kube-proxy's", () => {
  const cm = (data: Record<string, string>, name = "cilium-config") =>
    RawText.of(
      JSON.stringify(
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "kube-system" }, data },
        null,
        2,
      ),
      { file: `raw/config/${name}.json` },
    );

  it("cilium-config alone: read, and said to be what was asked", () => {
    const c = buildDatapathConfig({
      ciliumConfigMap: cm({
        "routing-mode": "native",
        "tunnel-protocol": "vxlan",
        "enable-bpf-masquerade": "true",
        "kube-proxy-replacement": "true",
        "bpf-lb-sock-hostns-only": "true",
        "bpf-lb-mode": "dsr",
        "bpf-lb-algorithm": "maglev",
        "enable-ipv6": "true",
      }),
    });
    expect(values(c)).toMatchObject({
      routing: "native",
      tunnelProtocol: null,
      masquerading: "bpf",
      socketLB: "hostns-only",
      lbMode: "dsr",
      lbAlgorithm: "maglev",
      deviceMode: "veth",
      ipFamilies: ["ipv4", "ipv6"],
    });
    expect(c.routing.note).toMatch(/what was asked/);
    expect(c.routing.evidence[0]).toMatchObject({ quote: '    "routing-mode": "native",' });
    // enable-host-legacy-routing unset: the agent decides (fallbacks), so the ConfigMap cannot tell
    expect(c.hostRouting.unknown).toMatch(/enable-host-legacy-routing unreadable/);
  });

  it("status says what runs; a ConfigMap asking otherwise is reported beside it", () => {
    const c = buildDatapathConfig({
      status: statusWith({}),
      ciliumConfigMap: cm({
        "routing-mode": "native",
        "kube-proxy-replacement": "true",
        "bpf-lb-sock-hostns-only": "true",
      }),
    });
    expect(c.routing).toMatchObject({
      value: "tunnel",
      source: "status",
      disagrees: { source: "cilium-config", value: '"native"' },
    });
    expect(c.socketLB.disagrees?.value).toBe('"hostns-only"');
    expect(formatDatapathConfig(c)).toMatch(
      /differs from what was asked: routing \(cilium-config asks "native"\)/,
    );
  });

  it('kube-proxy: /proxyMode first, then config.conf ("" = iptables), then the caller\'s evidence of none', () => {
    const kpCm = (mode: string) =>
      cm(
        {
          "config.conf": `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ${mode}\n`,
        },
        "kube-proxy",
      );
    expect(
      buildDatapathConfig({ kubeProxyMode: RawText.of("nftables", { file: "m" }) }).kubeProxy,
    ).toMatchObject({
      value: "nftables",
      evidence: [{ quote: "nftables", at: { file: "m", line: 1 } }],
    });
    expect(buildDatapathConfig({ kubeProxyConfigMap: kpCm("ipvs") }).kubeProxy.value).toBe("ipvs");
    const empty = buildDatapathConfig({ kubeProxyConfigMap: kpCm('""') }).kubeProxy;
    expect(empty.value).toBe("iptables");
    expect(empty.evidence[0]).toMatchObject({ derived: 'config.conf mode: "" (iptables on Linux)' });
    const none = buildDatapathConfig({
      kubeProxyAbsent: derive("no kube-proxy DaemonSet in kube-system", {
        file: "calls/config.jsonl",
        call: 3,
      }),
    }).kubeProxy;
    expect(none).toMatchObject({ value: "none", source: "kube-proxy" });
    const bad = buildDatapathConfig({
      kubeProxyMode: RawText.of("<html>404</html>", { file: "m" }),
    }).kubeProxy;
    expect(bad.value).toBeNull();
    expect(bad.unknown).toMatch(/kube-proxy-mode: line 1: expected iptables, nftables or ipvs/);
    expect(buildDatapathConfig({ kubeProxyConfigMap: kpCm("userspace") }).kubeProxy.unknown).toMatch(
      /unknown kube-proxy mode/,
    );
  });
});
