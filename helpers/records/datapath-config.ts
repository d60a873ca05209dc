// One file over 450 lines: each datapath setting read from its sources in one order of trust, sharing those sources
/**
 * The live datapath configuration (issue 25) as one typed record, each field with the raw line it was read from.
 *
 * Sources, in order of trust: `cilium-dbg status --verbose` (what the agent runs), `cilium-dbg config -a` (the
 * agent's DaemonConfig), the `cilium-config` ConfigMap (what was asked: the agent reads it at start, and falls
 * back from some settings, e.g. BPF host routing without BPF masquerade), and for kube-proxy its `/proxyMode`
 * answer, then its ConfigMap's `config.conf`. A field no source tells is null with the reason (never a default
 * guessed); where the ConfigMap asks something else than the agent runs, the field says so (`disagrees`).
 * Where each setting prints: cilium pkg/client/client.go (status), the chart's cilium-configmap.yaml, kube-proxy's
 * server_linux.go.
 */
import { ParseError } from "../errors.ts";
import { type AgentConfig, parseConfig } from "../parse/config.ts";
import {
  type ConfigMapData,
  kubeProxyModeFromConfig,
  parseConfigMapJson,
  parseProxyMode,
} from "../parse/configmap-json.ts";
import { type AgentStatus, parseStatus } from "../parse/status.ts";
import { CONFIG_KEYS, type ConfigValues } from "../properties/config.ts";
import { type Derived, derive, type EvidenceItem, type RawText } from "./evidence.ts";

export type Routing = "tunnel" | "native";
export type TunnelProtocol = "vxlan" | "geneve";
export type HostRouting = "legacy" | "bpf";
export type Masquerading = "iptables" | "bpf" | "none";
export type SocketLB = "off" | "on" | "hostns-only";
export type LbMode = "snat" | "dsr" | "hybrid";
export type LbAlgorithm = "random" | "maglev";
export type DeviceMode = "veth" | "netkit" | "netkit-l2";
export type KubeProxy = "none" | "iptables" | "nftables" | "ipvs";
export type Family = "ipv4" | "ipv6";

export type Source = "status" | "config" | "cilium-config" | "kube-proxy";

/** One setting: its value and where it was read, or null and why not. */
export interface Setting<T> {
  /** null with `unknown`: not read; null without: read, and there is none (no tunnel protocol in native routing). */
  value: T | null;
  source: Source | null;
  evidence: EvidenceItem[];
  /** Why the value could not be read. */
  unknown?: string;
  /** Why a read null means "does not apply" (LB mode beside kube-proxy: no BPF NodePort). */
  note?: string;
  /** The ConfigMap asks for something else than the agent runs (not restarted since, or a fallback). */
  disagrees?: { source: Source; value: string; evidence: EvidenceItem[] };
}

export interface DatapathConfig {
  routing: Setting<Routing>;
  tunnelProtocol: Setting<TunnelProtocol>;
  hostRouting: Setting<HostRouting>;
  masquerading: Setting<Masquerading>;
  socketLB: Setting<SocketLB>;
  lbMode: Setting<LbMode>;
  lbAlgorithm: Setting<LbAlgorithm>;
  deviceMode: Setting<DeviceMode>;
  kubeProxy: Setting<KubeProxy>;
  ipFamilies: Setting<Family[]>;
}

export interface DatapathConfigSources {
  /** `cilium-dbg status --verbose` (plain `status` lacks the socket LB and LB lines). */
  status?: RawText;
  /** `cilium-dbg config -a`. */
  config?: RawText;
  /** `kubectl -n kube-system get configmap cilium-config -o json`. */
  ciliumConfigMap?: RawText;
  /** kube-proxy's `/proxyMode` answer on a node. */
  kubeProxyMode?: RawText;
  /** `kubectl -n kube-system get configmap kube-proxy -o json`. */
  kubeProxyConfigMap?: RawText;
  /** The caller's evidence that no kube-proxy runs (no DaemonSet, nothing answers /proxyMode). */
  kubeProxyAbsent?: Derived;
}

type Candidate<T> = { value: T | null; source: Source; evidence: EvidenceItem[]; note?: string };
type Try<T> = Candidate<T> | { unknown: string } | null;

interface Parsed<T> {
  value: T | null;
  raw: RawText | null;
  /** Why the source could not be used (absent, or a parse error's one line). */
  why: string | null;
}

function tryParse<T>(raw: RawText | undefined, name: string, parse: (s: string) => T): Parsed<T> {
  if (!raw) return { value: null, raw: null, why: `no ${name} was read` };
  try {
    return { value: parse(raw.text), raw, why: null };
  } catch (err) {
    if (err instanceof ParseError) return { value: null, raw, why: err.message };
    throw err;
  }
}

const squeeze = (s: string) => s.replace(/\s+/g, " ").trim();

function bool(v: string | undefined): boolean | null {
  if (v === undefined) return null;
  const t = v.trim().toLowerCase();
  if (t === "true" || t === "enabled") return true;
  if (t === "false" || t === "disabled") return false;
  return null;
}

/** The first candidate read; otherwise null with every source's reason. */
function pick<T>(field: string, tries: Try<T>[], cm: Try<T>): Setting<T> {
  const reasons: string[] = [];
  let chosen: Candidate<T> | null = null;
  for (const t of [...tries, cm]) {
    if (!t) continue;
    if ("unknown" in t) {
      reasons.push(t.unknown);
      continue;
    }
    chosen = t;
    break;
  }
  if (!chosen) return { value: null, source: null, evidence: [], unknown: `${field}: ${reasons.join("; ")}` };
  const out: Setting<T> = { value: chosen.value, source: chosen.source, evidence: chosen.evidence };
  if (chosen.note) out.note = chosen.note;
  if (cm && !("unknown" in cm) && cm !== chosen && JSON.stringify(cm.value) !== JSON.stringify(chosen.value))
    out.disagrees = { source: cm.source, value: JSON.stringify(cm.value), evidence: cm.evidence };
  return out;
}

export function buildDatapathConfig(src: DatapathConfigSources): DatapathConfig {
  const st = tryParse<AgentStatus>(src.status, "cilium-dbg status", parseStatus);
  const cf = tryParse<AgentConfig>(src.config, "cilium-dbg config -a", parseConfig);
  const cm = tryParse<ConfigMapData>(src.ciliumConfigMap, "cilium-config ConfigMap", parseConfigMapJson);

  // --- status --verbose
  const sLine = (key: string): EvidenceItem[] => {
    const n = st.value?.lines[key];
    return n !== undefined && st.raw ? [st.raw.quote(n)] : [];
  };
  const sField = (key: string): string | undefined => st.value?.fields[key];
  const fromStatus = <T>(key: string, what: string, read: (v: string) => T | undefined): Try<T> => {
    if (!st.value) return { unknown: `status: ${st.why}` };
    const v = sField(key);
    if (v === undefined)
      return {
        unknown: `status has no \`${key.replace("KubeProxyReplacement Details/", "")}:\` line (${what})`,
      };
    const r = read(squeeze(v));
    if (r === undefined) return { unknown: `status: unknown ${what} ${JSON.stringify(squeeze(v))}` };
    return { value: r, source: "status", evidence: sLine(key) };
  };
  const routingLine = (): RegExpExecArray | null =>
    /Network: (Native|Tunnel)(?: \[(\w+)\])?\s+Host: (BPF|Legacy)/.exec(squeeze(sField("Routing") ?? ""));

  // --- config -a (1.18/1.19 top level; 1.20 moved some under UnsafeDaemonConfigOption, printed Enabled/Disabled)
  const cOpt = (...keys: string[]): { key: string; value: string } | null => {
    for (const k of keys) {
      const v = cf.value?.options[k];
      if (v !== undefined) return { key: k, value: v };
    }
    return null;
  };
  const cLine = (key: string): EvidenceItem[] => {
    const n = cf.value?.lines[key];
    return n !== undefined && cf.raw ? [cf.raw.quote(n)] : [];
  };
  const fromConfig = <T>(keys: string[], read: (v: string) => T | undefined): Try<T> => {
    if (!cf.value) return { unknown: `config: ${cf.why}` };
    const o = cOpt(...keys);
    if (!o) return { unknown: `config -a has no ${keys.join(" / ")}` };
    const r = read(o.value);
    if (r === undefined) return { unknown: `config -a: unknown ${o.key} ${JSON.stringify(o.value)}` };
    return { value: r, source: "config", evidence: cLine(o.key) };
  };

  // --- cilium-config ConfigMap (what was asked)
  const cmData = cm.value?.data;
  const cmEvidence = (key: string): EvidenceItem[] => {
    if (!cm.raw) return [];
    const q = cm.raw.jsonQuote(["data", key]);
    return q ? [q] : [derive(`cilium-config has no ${key}`, cm.raw)];
  };
  const fromCm = <T>(
    keys: string[],
    read: (d: Record<string, string>) => T | null | undefined,
    note?: string,
  ): Try<T> => {
    if (!cmData) return cm.raw ? { unknown: `cilium-config: ${cm.why}` } : null;
    const r = read(cmData);
    if (r === undefined) return { unknown: `cilium-config: ${keys.join(" / ")} unreadable` };
    return {
      value: r,
      source: "cilium-config",
      evidence: keys.flatMap(cmEvidence),
      note: note ?? "from cilium-config: what was asked (the agent reads it when it starts)",
    };
  };

  const routing = pick<Routing>(
    "routing",
    [
      st.value
        ? (() => {
            const m = routingLine();
            return m
              ? {
                  value: m[1] === "Native" ? "native" : "tunnel",
                  source: "status",
                  evidence: sLine("Routing"),
                }
              : fromStatus<Routing>("Routing", "routing", () => undefined);
          })()
        : { unknown: `status: ${st.why}` },
      fromConfig<Routing>(["RoutingMode"], (v) => (v === "tunnel" || v === "native" ? v : undefined)),
    ],
    fromCm<Routing>(["routing-mode"], (d) => {
      const v = d["routing-mode"];
      return v === "tunnel" || v === "native" ? v : undefined;
    }),
  );

  const tunnelFromStatus = (): Try<TunnelProtocol> => {
    if (!st.value) return { unknown: `status: ${st.why}` };
    const m = routingLine();
    if (!m) return { unknown: "status has no readable `Routing:` line" };
    if (m[1] === "Native")
      return { value: null, source: "status", evidence: sLine("Routing"), note: "native routing: no tunnel" };
    const p = m[2];
    return p === "vxlan" || p === "geneve"
      ? { value: p, source: "status", evidence: sLine("Routing") }
      : { unknown: `status: unknown tunnel ${JSON.stringify(p ?? "")}` };
  };
  const tunnelProtocol = pick<TunnelProtocol>(
    "tunnel protocol",
    [
      tunnelFromStatus(),
      routing.value === "native" && routing.source === "config"
        ? { value: null, source: "config", evidence: routing.evidence, note: "native routing: no tunnel" }
        : { unknown: "config -a prints no tunnel protocol (since 1.18)" },
    ],
    fromCm<TunnelProtocol>(["routing-mode", "tunnel-protocol"], (d) => {
      if (d["routing-mode"] === "native") return null;
      const v = d["tunnel-protocol"];
      return v === "vxlan" || v === "geneve" ? v : undefined;
    }),
  );

  const hostRouting = pick<HostRouting>(
    "host routing",
    [
      st.value
        ? (() => {
            const m = routingLine();
            return m
              ? { value: m[3] === "BPF" ? "bpf" : "legacy", source: "status", evidence: sLine("Routing") }
              : { unknown: "status has no readable `Routing:` line" };
          })()
        : { unknown: `status: ${st.why}` },
      fromConfig<HostRouting>(
        ["EnableHostLegacyRouting", "UnsafeDaemonConfigOption.EnableHostLegacyRouting"],
        (v) => {
          const b = bool(v);
          return b === null ? undefined : b ? "legacy" : "bpf";
        },
      ),
    ],
    fromCm<HostRouting>(["enable-host-legacy-routing"], (d) => {
      const b = bool(d["enable-host-legacy-routing"]);
      return b === null ? undefined : b ? "legacy" : "bpf";
    }),
  );

  const masquerading = pick<Masquerading>(
    "masquerading",
    [
      fromStatus<Masquerading>("Masquerading", "masquerading", (v) =>
        /^BPF\b/.test(v)
          ? "bpf"
          : /^IPTables\b/.test(v)
            ? "iptables"
            : /^Disabled\b/.test(v)
              ? "none"
              : undefined,
      ),
      (() => {
        if (!cf.value) return { unknown: `config: ${cf.why}` };
        const v4 = bool(cOpt("EnableIPv4Masquerade")?.value);
        const v6 = bool(cOpt("EnableIPv6Masquerade")?.value);
        const bpf = bool(cOpt("EnableBPFMasquerade")?.value);
        if (v4 === null || v6 === null || bpf === null)
          return {
            unknown: "config -a lacks EnableIPv4Masquerade / EnableIPv6Masquerade / EnableBPFMasquerade",
          };
        const evidence = [
          ...cLine("EnableIPv4Masquerade"),
          ...cLine("EnableIPv6Masquerade"),
          ...cLine("EnableBPFMasquerade"),
        ];
        return { value: !v4 && !v6 ? "none" : bpf ? "bpf" : "iptables", source: "config" as const, evidence };
      })(),
    ],
    fromCm<Masquerading>(
      ["enable-ipv4-masquerade", "enable-ipv6-masquerade", "enable-bpf-masquerade"],
      (d) => {
        const v4 = bool(d["enable-ipv4-masquerade"]) ?? true;
        const v6 = bool(d["enable-ipv6-masquerade"]) ?? false;
        return !v4 && !v6 ? "none" : bool(d["enable-bpf-masquerade"]) ? "bpf" : "iptables";
      },
    ),
  );

  const socketLB = pick<SocketLB>(
    "socket LB",
    [
      (() => {
        if (!st.value) return { unknown: `status: ${st.why}` };
        const on = sField("KubeProxyReplacement Details/Socket LB");
        const cov = sField("KubeProxyReplacement Details/Socket LB Coverage");
        if (on === undefined)
          return {
            unknown: "status has no KubeProxyReplacement Details (plain `status`, not `status --verbose`)",
          };
        const evidence = [
          ...sLine("KubeProxyReplacement Details/Socket LB"),
          ...sLine("KubeProxyReplacement Details/Socket LB Coverage"),
        ];
        if (on === "Disabled") return { value: "off", source: "status" as const, evidence };
        if (on !== "Enabled") return { unknown: `status: unknown Socket LB ${JSON.stringify(on)}` };
        if (cov === "Hostns-only") return { value: "hostns-only", source: "status" as const, evidence };
        if (cov === "Full") return { value: "on", source: "status" as const, evidence };
        return {
          unknown: `status: Socket LB Enabled without a readable coverage (${JSON.stringify(cov ?? "")})`,
        };
      })(),
      { unknown: "config -a has no socket LB switch (removed with the KPR cell in 1.18)" },
    ],
    fromCm<SocketLB>(["kube-proxy-replacement", "bpf-lb-sock", "bpf-lb-sock-hostns-only"], (d) => {
      // KPR=true turns socket LB on by itself (cilium pkg/kpr/kpr.go NewKPRConfig)
      const on = bool(d["kube-proxy-replacement"]) === true || bool(d["bpf-lb-sock"]) === true;
      if (!on) return "off";
      return bool(d["bpf-lb-sock-hostns-only"]) ? "hostns-only" : "on";
    }),
  );

  // LB mode and algorithm print only where Cilium serves NodePorts (KPR): beside kube-proxy they do not apply
  const kprOff = (): Candidate<never> | null => {
    const s = sField("KubeProxyReplacement Details/Status");
    if (s !== "False") return null;
    return {
      value: null,
      source: "status",
      evidence: sLine("KubeProxyReplacement Details/Status"),
      note: "KubeProxyReplacement False: no BPF NodePort, so no LB mode or algorithm (Cilium ≥ 1.19)",
    };
  };
  const lbMode = pick<LbMode>(
    "LB mode",
    [
      kprOff() ??
        fromStatus<LbMode>("KubeProxyReplacement Details/Mode", "LB mode", (v) =>
          v === "SNAT" ? "snat" : v === "DSR" ? "dsr" : v === "Hybrid" ? "hybrid" : undefined,
        ),
      { unknown: "config -a has no LB mode (removed with the KPR cell in 1.18)" },
    ],
    fromCm<LbMode>(["kube-proxy-replacement", "bpf-lb-mode"], (d) => {
      if (bool(d["kube-proxy-replacement"]) !== true) return null;
      const v = d["bpf-lb-mode"] ?? "snat";
      return v === "snat" || v === "dsr" || v === "hybrid" ? v : undefined;
    }),
  );
  const lbAlgorithm = pick<LbAlgorithm>(
    "LB algorithm",
    [
      kprOff() ??
        fromStatus<LbAlgorithm>("KubeProxyReplacement Details/Backend Selection", "backend selection", (v) =>
          /^Random\b/.test(v) ? "random" : /^Maglev\b/.test(v) ? "maglev" : undefined,
        ),
      { unknown: "config -a has no LB algorithm (removed with the KPR cell in 1.18)" },
    ],
    fromCm<LbAlgorithm>(["kube-proxy-replacement", "bpf-lb-algorithm"], (d) => {
      if (bool(d["kube-proxy-replacement"]) !== true) return null;
      const v = d["bpf-lb-algorithm"] ?? "random";
      return v === "random" || v === "maglev" ? v : undefined;
    }),
  );

  const device = (v: string): DeviceMode | undefined => {
    const t = v.split(/\s/)[0];
    return t === "veth" || t === "netkit" || t === "netkit-l2" ? t : undefined;
  };
  const deviceMode = pick<DeviceMode>(
    "device mode",
    [
      fromStatus<DeviceMode>("Device Mode", "device mode", device),
      fromConfig<DeviceMode>(["DatapathMode"], device),
    ],
    fromCm<DeviceMode>(["datapath-mode"], (d) => device(d["datapath-mode"] ?? "veth")),
  );

  const ipFamilies = pick<Family[]>(
    "IP families",
    [
      (() => {
        if (!cf.value) return { unknown: `config: ${cf.why}` };
        const v4 = bool(cOpt("EnableIPv4")?.value);
        const v6 = bool(cOpt("EnableIPv6")?.value);
        if (v4 === null || v6 === null) return { unknown: "config -a lacks EnableIPv4 / EnableIPv6" };
        const fams: Family[] = [...(v4 ? (["ipv4"] as const) : []), ...(v6 ? (["ipv6"] as const) : [])];
        return {
          value: fams,
          source: "config" as const,
          evidence: [...cLine("EnableIPv4"), ...cLine("EnableIPv6")],
        };
      })(),
      fromStatus<Family[]>("IPAM", "IPAM", (v) => {
        const fams: Family[] = [
          ...(/IPv4:/.test(v) ? (["ipv4"] as const) : []),
          ...(/IPv6:/.test(v) ? (["ipv6"] as const) : []),
        ];
        return fams.length ? fams : undefined;
      }),
    ],
    fromCm<Family[]>(["enable-ipv4", "enable-ipv6"], (d) => [
      ...((bool(d["enable-ipv4"]) ?? true) ? (["ipv4"] as const) : []),
      ...((bool(d["enable-ipv6"]) ?? false) ? (["ipv6"] as const) : []),
    ]),
  );

  return {
    routing,
    tunnelProtocol,
    hostRouting,
    masquerading,
    socketLB,
    lbMode,
    lbAlgorithm,
    deviceMode,
    kubeProxy: kubeProxySetting(src),
    ipFamilies,
  };
}

function kubeProxySetting(src: DatapathConfigSources): Setting<KubeProxy> {
  const reasons: string[] = [];
  if (src.kubeProxyMode && src.kubeProxyMode.text.trim() !== "") {
    try {
      const mode = parseProxyMode(src.kubeProxyMode.text);
      const n = src.kubeProxyMode.lines.findIndex((l) => l.trim() !== "") + 1;
      return { value: mode, source: "kube-proxy", evidence: [src.kubeProxyMode.quote(n)] };
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      reasons.push(err.message);
    }
  }
  if (src.kubeProxyConfigMap) {
    try {
      const cm = parseConfigMapJson(src.kubeProxyConfigMap.text);
      const conf = cm.data["config.conf"];
      if (conf === undefined) reasons.push("the kube-proxy ConfigMap has no config.conf");
      else {
        const { mode, asWritten } = kubeProxyModeFromConfig(conf);
        const q = src.kubeProxyConfigMap.jsonQuote(["data", "config.conf"]);
        return {
          value: mode,
          source: "kube-proxy",
          evidence: [
            derive(
              asWritten === ""
                ? 'config.conf mode: "" (iptables on Linux)'
                : `config.conf mode: ${asWritten}`,
              q ?? src.kubeProxyConfigMap,
            ),
          ],
          note: "from kube-proxy's ConfigMap: what it was configured with",
        };
      }
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      reasons.push(err.message);
    }
  }
  if (src.kubeProxyAbsent) return { value: "none", source: "kube-proxy", evidence: [src.kubeProxyAbsent] };
  if (reasons.length === 0)
    reasons.push("neither kube-proxy's /proxyMode, its ConfigMap nor its absence was read");
  return { value: null, source: null, evidence: [], unknown: `kube-proxy: ${reasons.join("; ")}` };
}

const FIELDS: (keyof DatapathConfig)[] = [
  "routing",
  "tunnelProtocol",
  "hostRouting",
  "masquerading",
  "socketLB",
  "lbMode",
  "lbAlgorithm",
  "deviceMode",
  "kubeProxy",
  "ipFamilies",
];

/** One line for `check`, `plan` and the report header: `routing native, host bpf, …` (`?` where unread). */
export function formatDatapathConfig(c: DatapathConfig): string {
  const show = (s: Setting<unknown>): string =>
    s.unknown !== undefined
      ? "?"
      : s.value === null
        ? "n/a"
        : Array.isArray(s.value)
          ? s.value.join("+")
          : String(s.value);
  const tunnel = c.routing.value === "tunnel" ? `/${show(c.tunnelProtocol)}` : "";
  const parts = [
    `routing ${show(c.routing)}${tunnel}`,
    `host ${show(c.hostRouting)}`,
    `masquerading ${show(c.masquerading)}`,
    `socket LB ${show(c.socketLB)}`,
    `LB ${show(c.lbMode)}/${show(c.lbAlgorithm)}`,
    `device ${show(c.deviceMode)}`,
    `kube-proxy ${show(c.kubeProxy)}`,
    `families ${show(c.ipFamilies)}`,
  ];
  const differs = FIELDS.filter((f) => c[f].disagrees).map(
    (f) => `${f} (cilium-config asks ${c[f].disagrees?.value})`,
  );
  return `${parts.join(", ")}${differs.length ? `; differs from what was asked: ${differs.join(", ")}` : ""}`;
}

/** The fields no source told, each with its reason. */
export function unreadSettings(c: DatapathConfig): { field: keyof DatapathConfig; reason: string }[] {
  return FIELDS.flatMap((f) =>
    c[f].unknown !== undefined ? [{ field: f, reason: c[f].unknown as string }] : [],
  );
}

/** The settings as plain values, as properties resolve their expectations (helpers/properties/config.ts). */
export function configValues(c: DatapathConfig): ConfigValues {
  const v = (s: Setting<unknown>): string | null =>
    s.value === null || s.value === undefined
      ? null
      : Array.isArray(s.value)
        ? s.value.join("+")
        : String(s.value);
  return Object.fromEntries(CONFIG_KEYS.map((k) => [k, v(c[k])])) as ConfigValues;
}
