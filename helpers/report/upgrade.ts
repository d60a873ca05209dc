/**
 * The report's upgrade view, for a bundle with an upgrade leg: per leg (the upgrade, and the rollback after
 * it), before → after versions, how long the rollout took, what the traffic saw (requests and failures with
 * their times, the longest gap, each long-lived connection and its backend before → after), every agent's
 * version after, when each node's agent restarted and what the datapath dropped meanwhile.
 */

import type { BundleMeta } from "../bundle/read.ts";
import { type Html, html } from "../html.ts";
import type { Verdict } from "../properties/judge.ts";
import { isFailure } from "../properties/status.ts";
import { shownValue } from "../records/evidence.ts";
import type { LegRun, UpgradeLeg } from "../records/types.ts";
import { connectionSurvived, isUpgradeVerdict, legOutageMs } from "../records/upgrade.ts";
import { MARK } from "./assets.ts";

export interface UpgradeView {
  from: string;
  to: string;
  legs: UpgradeLeg[];
  verdicts: Verdict[];
}

/** The view of one bundle, or null when it has no upgrade record. */
export function upgradeView(
  meta: BundleMeta,
  run: LegRun | undefined,
  verdicts: Verdict[],
): UpgradeView | null {
  if (!run || !Array.isArray(run.legs) || run.to === undefined) return null;
  return {
    from: run.from ?? meta.cilium,
    to: run.to,
    legs: run.legs,
    verdicts: verdicts.filter(isUpgradeVerdict),
  };
}

const MAX_FAILURES = 20;
/** A time as an ISO timestamp (issue 37: whole, so it can be set beside another log's). */
const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));

function renderLeg(l: UpgradeLeg): Html {
  const agents = Object.entries(l.agents_after);
  const facts: [string, string][] = [
    ["Cilium", `${l.from} → ${l.to}`],
    [
      "rollout took",
      `${l.duration_s.toFixed(1)} s (from the helm ${l.kind} to every agent on ${l.to} and OK)`,
    ],
    [
      "requests during it",
      `${l.requests.total}, ${l.requests.failed} failed (${iso(l.window.from_ms)} – ${iso(l.window.to_ms)})`,
    ],
  ];
  const outage = l.requests.longest_outage;
  const ms = legOutageMs(l);
  facts.push([
    "longest outage",
    outage && ms !== null
      ? `${ms} ms without a success to ${outage.to} (the figure upgrade.longest-outage judges: ${outage.ms} ms between successes${outage.measured_stall_ms ? ` less ${outage.measured_stall_ms} ms the loop measured itself stalled` : ""})`
      : "none: no request failed",
  ]);
  for (const [to, d] of Object.entries(l.requests.gaps ?? {}))
    facts.push([
      `gaps to ${to}`,
      `${d.n} between successes: p50 ${d.p50} ms, p90 ${d.p90} ms, p99 ${d.p99} ms, max ${d.max} ms (net of the loop's stall; ${d.over500} over 500 ms)`,
    ]);
  facts.push([
    "agents after",
    agents.map(([node, a]) => `${node}: ${a.version}${a.ok ? "" : " (not OK)"}`).join(", ") || "(none read)",
  ]);
  const restarts = Object.entries(l.agent_restarts ?? {});
  if (restarts.length > 0)
    facts.push([
      "agents restarted",
      restarts.map(([node, r]) => `${node} ${r.started ?? "?"} → ready ${r.ready ?? "?"}`).join(", "),
    ]);
  const conns = html`<table class="upgrade-conns"><thead><tr><th>connection</th><th>survived</th><th>answered by, before → after</th></tr></thead><tbody>${l.connections.map(
    (c) => {
      const ok = connectionSurvived(c);
      const changed = c.backend_before !== null && c.backend_after !== c.backend_before;
      return html`<tr><td>${c.name} <span class="muted">(${c.via}, ${c.node})</span></td><td class="verdict ${ok ? "pass" : "fail"}">${ok ? "yes" : `no: ${c.closed_events} close, ${c.error_events} error`}</td><td><code>${c.backend_before ?? "?"}</code> → <code>${c.backend_after ?? "?"}</code>${changed ? html` <span class="changed">changed</span>` : ""}</td></tr>`;
    },
  )}</tbody></table>`;
  const f = l.requests.failures;
  const failures =
    f.length > 0
      ? html`<details class="upgrade-failures"><summary>${f.length} failed request${f.length === 1 ? "" : "s"}</summary><ul>${f
          .slice(0, MAX_FAILURES)
          .map(
            (x) => html`<li><code>${iso(x.t)}</code> ${x.to}: ${x.error}</li>`,
          )}${f.length > MAX_FAILURES ? html`<li class="muted">… ${f.length - MAX_FAILURES} more</li>` : ""}</ul></details>`
      : "";
  const drops =
    (l.drops ?? []).length > 0
      ? html`<details class="upgrade-drops"><summary>datapath drops during the ${l.kind}</summary><ul>${l.drops.map(
          (d) =>
            html`<li>${d.node}: ${String(d.packets)} × ${d.reason} <span class="muted">(${d.direction}, ${d.file}:${d.line})</span></li>`,
        )}</ul></details>`
      : "";
  return html`<h4>${l.kind === "upgrade" ? "Upgrade" : "Rollback"}: Cilium ${l.from} → ${l.to}</h4>
<dl>${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
${conns}${failures}${drops}`;
}

/**
 * The view as a section of the page, headed by the gate's word (HELD, BROKEN, INCONCLUSIVE) when it was judged;
 * closed behind its heading when the page has several upgrades. An upgrade bundle whose record cannot be read
 * still gets its section: its verdicts say why.
 */
export function renderUpgrade(
  label: string,
  u: UpgradeView | null,
  /** The upgrade's verdicts (the caller picks them: isUpgradeVerdict), shown when there is no view. */
  all: Verdict[],
  word: string | null,
  collapsed = false,
  /** The part the word is about (issue 44: a card titled BROKEN names what broke: `in the restart leg`). */
  part: string | null = null,
): Html {
  const vs = u ? u.verdicts : all;
  const verdicts =
    vs.length > 0
      ? html`<ul class="upgrade-verdicts">${vs.map((v) => html`<li><span class="verdict ${v.status}">${MARK[v.status]}</span> <code>${v.id}</code> ${v.claim}${isFailure(v.status) ? html` <span class="verdict fail">expected ${shownValue(v.expected)}, observed ${shownValue(v.observed)}${v.status === "changed" ? " (changed in the new minor)" : ""}</span>` : ""}</li>`)}</ul>`
      : "";
  const cls =
    word === "HELD" ? "pass" : word === "BROKEN" || word === "REGRESSED" ? "fail" : word ? "skip" : "";
  const head = html`${word ? html`<span class="word v-${cls}">${word}</span> ` : ""}${part ? html`<span class="gate-part">${part}</span> · ` : ""}Upgrade under load: ${u ? `Cilium ${u.from} → ${u.to}` : "its record could not be read"} <span class="muted">(${label})</span>`;
  const body = u
    ? html`${u.legs.map(renderLeg).map((x) => html`${x}\n`)}\n${verdicts}`
    : html`<p class="verdict fail">The bundle's upgrade record could not be derived from its raw outputs: each upgrade property below says why.</p>${verdicts}`;
  return collapsed
    ? html`<details class="upgrade" aria-label="upgrade: ${label}"><summary><h3>${head}</h3></summary>
${body}</details>`
    : html`<section class="upgrade" aria-label="upgrade: ${label}">
<h3>${head}</h3>
${body}</section>`;
}
