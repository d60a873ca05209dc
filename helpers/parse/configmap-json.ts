import { parse as parseYaml } from "yaml";
import { ParseError } from "../errors.ts";
import { parseJsonText } from "./lines.ts";

/** `kubectl get configmap NAME -o json`: its name and data (every value a string). */
export interface ConfigMapData {
  name: string | null;
  namespace: string | null;
  data: Record<string, string>;
}

const FORMAT = "configmap-json";

export function parseConfigMapJson(input: string): ConfigMapData {
  const doc = parseJsonText(FORMAT, input) as Record<string, unknown> | null;
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || doc.kind !== "ConfigMap")
    throw new ParseError(
      FORMAT,
      1,
      input.split("\n")[0] ?? "",
      "expected a ConfigMap object (kind: ConfigMap)",
    );
  const meta = (doc.metadata ?? {}) as Record<string, unknown>;
  const raw = (doc.data ?? {}) as Record<string, unknown>;
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === "string") data[k] = v;
  return {
    name: typeof meta.name === "string" ? meta.name : null,
    namespace: typeof meta.namespace === "string" ? meta.namespace : null,
    data,
  };
}

export type KubeProxyMode = "iptables" | "nftables" | "ipvs";
const MODES: readonly string[] = ["iptables", "nftables", "ipvs"];

/**
 * kube-proxy's mode from its `config.conf` (a KubeProxyConfiguration, as kubeadm stores it in ConfigMap
 * kube-system/kube-proxy). An empty or missing `mode` is iptables on Linux (platformApplyDefaults,
 * cmd/kube-proxy/app/server_linux.go, Kubernetes v1.35.5).
 */
export function kubeProxyModeFromConfig(conf: string): { mode: KubeProxyMode; asWritten: string } {
  let doc: unknown;
  try {
    doc = parseYaml(conf);
  } catch (err) {
    throw new ParseError(
      "kube-proxy-config",
      1,
      conf.split("\n")[0] ?? "",
      `not YAML (${(err as Error).message})`,
    );
  }
  const o = (doc ?? {}) as Record<string, unknown>;
  if (o.kind !== "KubeProxyConfiguration")
    throw new ParseError(
      "kube-proxy-config",
      1,
      conf.split("\n")[0] ?? "",
      "expected kind: KubeProxyConfiguration",
    );
  const written = o.mode === undefined || o.mode === null ? "" : String(o.mode);
  if (written === "") return { mode: "iptables", asWritten: written };
  if (!MODES.includes(written))
    throw new ParseError("kube-proxy-config", 1, `mode: ${written}`, "unknown kube-proxy mode");
  return { mode: written as KubeProxyMode, asWritten: written };
}

/** kube-proxy's `/proxyMode` answer (its metrics port, 127.0.0.1:10249 by default): the mode it runs. */
export function parseProxyMode(input: string): KubeProxyMode {
  const t = input.trim();
  if (!MODES.includes(t))
    throw new ParseError(
      "kube-proxy-mode",
      1,
      input.split("\n")[0] ?? "",
      "expected iptables, nftables or ipvs",
    );
  return t as KubeProxyMode;
}
