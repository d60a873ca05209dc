import { type CheckResult, checkBundle } from "./check.ts";
import { mdCell } from "./markdown.ts";
import { resolve } from "./properties/expectation.ts";
import type { RecordSet } from "./records/types.ts";
import type { TopicDeclaration } from "./topic.ts";

export interface VerdictChange {
  id: string;
  a: string;
  b: string;
  /** not-applicable: judged in A, declared not applicable in B's mode (comparing two modes), no regression. */
  kind: "changed" | "disappeared" | "appeared" | "same" | "not-applicable";
}

export interface Comparison {
  a: CheckResult;
  b: CheckResult;
  verdicts: VerdictChange[];
  values: { name: string; a: string; b: string; changed: boolean }[];
  /** True when a verdict changed or a property disappeared: `compare` exits 1. */
  regressed: boolean;
}

/** The lab's key values, as compared across runs (versions, upgrades). */
export function keyValues(r: RecordSet): Record<string, string> {
  const show = (v: unknown) =>
    v === undefined
      ? "(not collected)"
      : v === null
        ? "(none)"
        : typeof v === "string"
          ? v
          : JSON.stringify(v);
  const prog = r.prog?.record;
  const policy = prog
    ? prog.policy_map.replace(String(prog.endpoint_id).padStart(5, "0"), "<id:05>")
    : undefined;
  return {
    KubeProxyReplacement: show(r.iptables?.record.kube_proxy_replacement),
    "KUBE-SVC lines": show(r.iptables?.record.kube_svc_lines),
    "Socket LB coverage": show(r.ct ? r.ct.record.socket_lb_coverage : undefined),
    "holder socket peer is the backend": show(
      r.ct ? r.ct.record.socket_peer === r.ct.record.backend : undefined,
    ),
    "attach point": show(prog?.attach),
    program: show(prog?.program),
    "policy map naming": show(policy),
    "NodePort agent entry": show(r.nodeport ? r.nodeport.record.service_id !== null : undefined),
    "ghost curl exit": show(r.ghost?.record.curl_exit),
    "ghost errno": show(r.datapath?.record.ghost_errno),
    "ghost seconds": show(r.ghost?.record.seconds),
    ServiceNoBackendResponse: show(r.ghost?.record.no_backend_response),
    "ghost wildcard entry": show(r.datapath?.record.ghost_wildcard_entry),
    "Cilium version": show(r.datapath?.record.cilium_version),
  };
}

/** Property by property, and the key values, of two bundles (each re-judged from its raw outputs). */
export async function compareBundles(
  dirA: string,
  dirB: string,
  topics: TopicDeclaration[],
): Promise<Comparison> {
  const a = await checkBundle(dirA, topics);
  const b = await checkBundle(dirB, topics);
  const byId = (r: CheckResult) => new Map(r.verdicts.map((v) => [v.id, v.status as string]));
  const va = byId(a);
  const vb = byId(b);
  // declared not applicable in B's mode and version (comparing two modes): no regression
  const naInB = new Set(
    topics
      .flatMap((t) => t.properties)
      .filter((p) => "na" in resolve(p.expect[b.mode], b.cilium))
      .map((p) => p.id),
  );
  const ids = [...new Set([...va.keys(), ...vb.keys()])];
  const verdicts: VerdictChange[] = ids.map((id) => {
    const x = va.get(id);
    const y = vb.get(id);
    const judged = (s?: string) => s === "pass" || s === "fail";
    let kind: VerdictChange["kind"] = "same";
    if (judged(x) && !judged(y)) kind = naInB.has(id) ? "not-applicable" : "disappeared";
    else if (!judged(x) && judged(y)) kind = "appeared";
    else if (x !== y) kind = "changed";
    return { id, a: x ?? "(absent)", b: y ?? "(absent)", kind };
  });
  const ka = keyValues(a.records);
  const kb = keyValues(b.records);
  const values = Object.keys(ka).map((name) => ({
    name,
    a: ka[name] as string,
    b: kb[name] as string,
    changed: ka[name] !== kb[name],
  }));
  return {
    a,
    b,
    verdicts,
    values,
    regressed: verdicts.some((v) => v.kind === "changed" || v.kind === "disappeared"),
  };
}

const cell = mdCell;
/** A path as a code span: no backtick or line break of its own can end it. */
const code = (s: string) => `\`${s.replace(/[`\r\n]/g, " ")}\``;

export function formatComparison(c: Comparison): string {
  const head = (r: CheckResult) => `${r.mode}, Cilium ${r.cilium}`;
  const out = [
    `### Compare ${code(c.a.bundle)} (${cell(head(c.a))}) → ${code(c.b.bundle)} (${cell(head(c.b))})`,
    "",
    c.a.mode !== c.b.mode
      ? `> The bundles are of different modes (${c.a.mode} vs ${c.b.mode}); each verdict is judged against its own mode's expectation.\n`
      : "",
    "| property | A | B | change |",
    "|---|---|---|---|",
    ...c.verdicts
      .filter((v) => v.kind !== "same" && v.kind !== "not-applicable")
      .map((v) => `| \`${v.id}\` | ${v.a} | ${v.b} | **${v.kind}** |`),
    `| (${c.verdicts.filter((v) => v.kind === "same").length} unchanged${c.verdicts.some((v) => v.kind === "not-applicable") ? `, ${c.verdicts.filter((v) => v.kind === "not-applicable").length} not applicable in B's mode` : ""}) | | | |`,
    "",
    "| key value | A | B | |",
    "|---|---|---|---|",
    ...c.values.map((v) => `| ${v.name} | ${cell(v.a)} | ${cell(v.b)} | ${v.changed ? "changed" : ""} |`),
    "",
    c.regressed ? "**Regression: a verdict changed or a property disappeared.**" : "No verdict changed.",
    "",
  ];
  return out.filter((l, i) => !(l === "" && out[i - 1] === "")).join("\n");
}
