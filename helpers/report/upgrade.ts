/**
 * The report's upgrade view, for a bundle with an upgrade leg: before → after versions, how long it took,
 * and what the traffic saw. It renders what the record holds and leaves out what it does not: today's
 * record has the holder connection (before/after, closes, conntrack backend); a traffic record (requests,
 * failures with their time, the longest gap, connections that survived or not), the agents' versions after
 * and the upgrade's own duration are shown when a bundle carries them.
 */
import type { BundleMeta } from "../bundle.ts";
import type { Verdict } from "../properties/judge.ts";

export interface UpgradeConnection {
  from: string;
  to: string;
  survived: boolean | null;
  backendBefore: string | null;
  backendAfter: string | null;
}

export interface UpgradeView {
  before: string;
  after: string | null;
  /** Seconds: the record's own duration when it has one, else the upgrade spec's phase time. */
  seconds: number | null;
  secondsFrom: "record" | "spec phase" | null;
  agentVersionsAfter: { agent: string; version: string }[];
  traffic: {
    requests: number | null;
    failed: number | null;
    longestGapMs: number | null;
    failures: { t: string; error: string }[];
  } | null;
  connections: UpgradeConnection[];
  verdicts: Verdict[];
}

type Loose = Record<string, unknown>;
const obj = (x: unknown): Loose | null =>
  x && typeof x === "object" && !Array.isArray(x) ? (x as Loose) : null;
const str = (x: unknown): string | null =>
  typeof x === "string" ? x : typeof x === "number" ? String(x) : null;
const n = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);
const bool = (x: unknown): boolean | null => (typeof x === "boolean" ? x : null);

/** The view of one bundle, or null when it has no upgrade leg (no upgrade record and none asked for). */
export function upgradeView(meta: BundleMeta, record: unknown, verdicts: Verdict[]): UpgradeView | null {
  const r = obj(record);
  if (!r && !meta.upgrade) return null;
  const rec = r ?? {};
  const traffic = obj(rec.traffic);
  const connections: UpgradeConnection[] = [];
  if (traffic && Array.isArray(traffic.connections))
    for (const c of traffic.connections.map(obj))
      if (c)
        connections.push({
          from: str(c.from) ?? "?",
          to: str(c.to) ?? "?",
          survived: bool(c.survived),
          backendBefore: str(c.backendBefore),
          backendAfter: str(c.backendAfter),
        });
  // today's record: the holder's one connection to web
  if (connections.length === 0 && n(rec.connection_before) !== null) {
    const closed = n(rec.closed_events);
    const after = n(rec.connection_after);
    connections.push({
      from: "holder",
      to: "web (ClusterIP:80)",
      survived: closed === null || after === null ? null : closed === 0 && after >= 1,
      backendBefore: str(rec.backend_before),
      backendAfter: str(rec.backend_after),
    });
  }
  const versions = rec.agentVersionsAfter;
  const agentVersionsAfter = Array.isArray(versions)
    ? versions.map((v, i) => {
        const o = obj(v);
        return o
          ? { agent: str(o.agent ?? o.pod ?? o.node) ?? `agent ${i + 1}`, version: str(o.version) ?? "?" }
          : { agent: `agent ${i + 1}`, version: str(v) ?? "?" };
      })
    : obj(versions)
      ? Object.entries(versions as Loose).map(([agent, v]) => ({ agent, version: str(v) ?? "?" }))
      : [];
  const ownMs = n(rec.durationMs);
  const phase = meta.phases["spec upgrade"];
  const failures =
    traffic && Array.isArray(traffic.failures)
      ? traffic.failures
          .map(obj)
          .filter((f): f is Loose => f !== null)
          .map((f) => ({ t: str(f.t) ?? "?", error: str(f.error) ?? "?" }))
      : [];
  return {
    before: meta.cilium,
    after: str(rec.cilium_after) ?? str(rec.to) ?? meta.upgrade?.to ?? null,
    seconds: ownMs !== null ? ownMs / 1000 : (phase ?? null),
    secondsFrom: ownMs !== null ? "record" : phase !== undefined ? "spec phase" : null,
    agentVersionsAfter,
    traffic: traffic
      ? {
          requests: n(traffic.requests),
          failed: n(traffic.failed),
          longestGapMs: n(traffic.longestGapMs),
          failures,
        }
      : null,
    connections,
    verdicts: verdicts.filter((v) => v.topic === "upgrade"),
  };
}

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const MARK = { pass: "✔ pass", fail: "✘ fail", skip: "– skip" } as const;
const MAX_FAILURES = 20;

/** The view as a section of the page. */
export function renderUpgrade(label: string, u: UpgradeView): string {
  const facts: [string, string][] = [["Cilium", `${u.before} → ${u.after ?? "(not recorded)"}`]];
  if (u.seconds !== null)
    facts.push([
      "took",
      `${u.seconds.toFixed(1)} s${u.secondsFrom === "spec phase" ? " (the upgrade spec: preflight, helm upgrade, rollout, checks)" : ""}`,
    ]);
  if (u.traffic) {
    const t = u.traffic;
    if (t.requests !== null)
      facts.push(["requests during it", `${t.requests}${t.failed !== null ? `, ${t.failed} failed` : ""}`]);
    if (t.longestGapMs !== null) facts.push(["longest gap", `${t.longestGapMs} ms`]);
  }
  if (u.agentVersionsAfter.length > 0)
    facts.push(["agents after", u.agentVersionsAfter.map((a) => `${a.agent}: ${a.version}`).join(", ")]);
  const conns =
    u.connections.length > 0
      ? `<table class="upgrade-conns"><thead><tr><th>connection</th><th>survived</th><th>backend before → after</th></tr></thead><tbody>${u.connections
          .map(
            (c) =>
              `<tr><td>${esc(c.from)} → ${esc(c.to)}</td><td class="verdict ${c.survived === true ? "pass" : c.survived === false ? "fail" : "skip"}">${c.survived === true ? "yes" : c.survived === false ? "no" : "not recorded"}</td><td><code>${esc(c.backendBefore ?? "?")}</code> → <code>${esc(c.backendAfter ?? "?")}</code>${c.backendBefore && c.backendAfter && c.backendBefore !== c.backendAfter ? ' <span class="changed">changed</span>' : ""}</td></tr>`,
          )
          .join("")}</tbody></table>`
      : "";
  const failures =
    u.traffic && u.traffic.failures.length > 0
      ? `<details class="upgrade-failures"><summary>${u.traffic.failures.length} failed request${u.traffic.failures.length === 1 ? "" : "s"}</summary><ul>${u.traffic.failures
          .slice(0, MAX_FAILURES)
          .map((f) => `<li><code>${esc(f.t)}</code> ${esc(f.error)}</li>`)
          .join(
            "",
          )}${u.traffic.failures.length > MAX_FAILURES ? `<li class="muted">… ${u.traffic.failures.length - MAX_FAILURES} more</li>` : ""}</ul></details>`
      : "";
  const verdicts =
    u.verdicts.length > 0
      ? `<ul class="upgrade-verdicts">${u.verdicts.map((v) => `<li><span class="verdict ${v.status}">${MARK[v.status]}</span> <code>${esc(v.id)}</code> ${esc(v.claim)}</li>`).join("")}</ul>`
      : "";
  return `<section class="upgrade" aria-label="upgrade leg: ${esc(label)}">
<h3>Upgrade leg: Cilium ${esc(u.before)} → ${esc(u.after ?? "?")} <span class="muted">(${esc(label)})</span></h3>
<dl>${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>
${u.traffic ? "" : '<p class="muted">No traffic record in this bundle: the holder\'s connection is what was watched.</p>'}
${conns}${failures}${verdicts}</section>`;
}
