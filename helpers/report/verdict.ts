/**
 * The report's first screen (issue 37): the verdict, before anything else. For an upgrade bundle, the upgrade
 * gate's answer as `datapath-conformance upgrade` gives it (helpers/upgrade-gate.ts: HELD, BROKEN, REGRESSED or
 * INCONCLUSIVE, what broke, what stalled, what the rollback left); for every report, how many verdicts failed and
 * how many are known issues, the failures named in red with expected and observed, each a link to its row. A
 * change in a new minor (issue 38: an expectation assumed from the newest declared minor that did not hold) is one
 * of the failures, counted and named as such.
 */

import { type CheckResult, checkBundle } from "../check.ts";
import { type Html, html } from "../html.ts";
import type { Verdict } from "../properties/judge.ts";
import { countStatuses, isFailure, isKnownIssue, type Status } from "../properties/status.ts";
import { assumedText } from "../properties/versions.ts";
import { shownValue } from "../records/evidence.ts";
import type { TopicDeclaration } from "../topic.ts";
import type { GateResult, GateWord } from "../upgrade-gate.ts";
import { gateOf } from "../upgrade-inputs.ts";

/** One upgrade bundle's gate, by its column. */
export interface ColumnGate {
  column: number;
  gate: GateResult;
}

export type { GateWord };

/** The gate's word, as the gate decided it (one place: helpers/upgrade-gate.ts). */
export function gateWord(g: Pick<GateResult, "word">): GateWord {
  return g.word;
}

/**
 * The part of the upgrade the word is about, for a card's title (issue 44: "BROKEN Upgrade 1.19.7 → 1.20.2" where
 * its restart leg broke): the legs or nested runs named by what decided the word, or null for HELD.
 */
export function gatePart(
  g: Pick<GateResult, "word" | "broken" | "inconclusive" | "unjudged">,
): string | null {
  const parts = (items: { what: string }[]) => [...new Set(items.map((b) => b.what))];
  const named =
    g.word === "BROKEN"
      ? parts(g.broken)
      : g.word === "INCONCLUSIVE"
        ? parts([...g.inconclusive, ...g.unjudged])
        : [];
  if (g.word === "REGRESSED") return "known issues new on the target";
  return named.length > 0
    ? `in ${named.map((w) => (w.startsWith("after") ? w : `the ${w} leg`)).join(", ")}`
    : null;
}

/**
 * The gate of an upgrade bundle, judged as `datapath-conformance upgrade BUNDLE` judges it (helpers/upgrade-inputs.ts:
 * the same legs, fresh installs and source of known issues, so the banner and the CLI say the same word).
 */
export async function upgradeGate(
  up: CheckResult,
  topics: TopicDeclaration[],
  judge: (dir: string) => Promise<CheckResult> = (d) => checkBundle(d, topics),
): Promise<GateResult> {
  return gateOf(up.bundle, topics, { judge: (d) => (d === up.bundle ? Promise.resolve(up) : judge(d)) });
}

/** Epoch milliseconds in a recorded sentence (`started between 1796321262433 and …`, bundles before issue 37) as ISO. */
export function isoTimes(s: string): string {
  return s.replace(/\b(between )(\d{13})( and )(\d{13})\b/g, (_, a, x, b, y) => {
    const iso = (ms: string) => new Date(Number(ms)).toISOString();
    return `${a}${iso(x)}${b}${iso(y)}`;
  });
}

export interface BannerColumn {
  label: string;
  verdicts: Verdict[];
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "-");
/** The matrix row of a property (helpers/report/matrix.ts gives each row this id). */
export const rowId = (id: string) => `p-${slug(id)}`;

const FAILURES_SHOWN = 6;
const BROKEN_SHOWN = 4;

function gateBlock(label: string, g: GateResult, many: boolean): Html {
  const word = gateWord(g);
  const cls =
    word === "HELD"
      ? g.newKnownIssues.length > 0
        ? "known"
        : "pass"
      : word === "BROKEN" || word === "REGRESSED"
        ? "fail"
        : "skip";
  const broken = g.broken
    .slice(0, BROKEN_SHOWN)
    .map(
      (b) =>
        html`<li><b>${b.what}</b>: <code>${b.id}</code> expected ${shownValue(b.expected)}, observed ${shownValue(b.observed)}<span class="gate-line">${isoTimes(shownValue(b.line))}</span></li>`,
    );
  const more =
    g.broken.length > BROKEN_SHOWN
      ? html`<li class="muted">… ${g.broken.length - BROKEN_SHOWN} more (the upgrade view below names each)</li>`
      : "";
  const stalled = [...g.inconclusive, ...g.unjudged].map(
    (b) => html`<li><b>${b.what}</b>: not conclusive: <code>${b.id}</code> ${isoTimes(b.line)}</li>`,
  );
  // what the rollback left is named, not a failure: its own list, in the page's neutral colour (never the gate's red)
  const left =
    g.leftovers.length > 0
      ? html`<p class="left-head muted">Left by the rollback (pinned maps the upgrade added, still there; named, not a failure):</p><ul class="gate-list left">${g.leftovers.map(
          (x) => html`<li>${x.node}: ${x.maps.join(", ")}</li>`,
        )}</ul>`
      : "";
  const known = g.newKnownIssues.map((k) => html`<li><code>${k.id}</code>: ${k.detail}</li>`);
  const details = html`${
    broken.length + stalled.length + known.length > 0
      ? html`<ul class="gate-list">${broken}${more}${stalled}${known.length > 0 ? html`<li class="muted">known issues new on the target:</li>${known}` : ""}</ul>`
      : ""
  }${left}`;
  const body = html`<span class="word v-${cls}">${word}</span> <span class="gate-head">${g.headline}</span>${many ? html` <span class="muted">(${label})</span>` : ""}`;
  return many
    ? html`<details class="gate v-${cls}" data-word="${word}" aria-label="upgrade verdict: ${label}"><summary>${body}</summary>${details}</details>`
    : html`<div class="gate v-${cls}" data-word="${word}" aria-label="upgrade verdict: ${label}"><p class="gate-title">${body}</p>${details}</div>`;
}

/**
 * The banner: each upgrade's gate, then the counts of the whole report with its failures named (those of an
 * upgrade and of its legs' bundles are named by its gate already: `covered`, by column).
 */
export function renderBanner(
  cols: BannerColumn[],
  gates: ColumnGate[],
  covered: Set<number> = new Set(),
): Html {
  const all = cols.flatMap((c, i) => c.verdicts.map((v) => ({ v, c, i })));
  const counted = countStatuses(all.map((x) => x.v));
  const n = (s: Status) => counted[s];
  const failed = all.filter((x) => isFailure(x.v.status));
  const known = n("known-issue");
  const changed = n("changed");
  const cls = failed.length > 0 ? "fail" : known > 0 ? "known" : "pass";
  const bundles = (k: number) => `${k} bundle${k === 1 ? "" : "s"}`;
  const withFail = new Set(failed.map((x) => x.i)).size;
  const counts = `${failed.length} failed, ${known} known issue${known === 1 ? "" : "s"}`;
  const where =
    cols.length === 1
      ? `in ${cols[0]?.label}: ${n("pass")} passed, ${n("skip")} skipped`
      : `in ${bundles(cols.length)}${failed.length > 0 ? ` (${bundles(withFail)} with a failure)` : ""}: ${n("pass")} passed, ${n("skip")} skipped`;
  const changedNote =
    changed > 0
      ? `; ${changed} of the failed changed in the new minor (a regression or a new behaviour, to be declared)`
      : "";
  const named = failed.filter((x) => !covered.has(x.i));
  const byGate = failed.length - named.length;
  const failures = named
    .slice(0, FAILURES_SHOWN)
    .map(
      ({ v, c }) =>
        html`<li><a href="#${rowId(v.id)}"><code>${v.id}</code></a> in <b>${c.label}</b>: ${v.status === "changed" ? "changed in the new minor: " : ""}expected ${shownValue(v.expected)}${v.assumedFrom ? ` (${assumedText(v.assumedFrom)})` : ""}, observed ${shownValue(v.observed)}</li>`,
    );
  const moreFailures = html`${
    named.length > FAILURES_SHOWN
      ? html`<li class="muted">… ${named.length - FAILURES_SHOWN} more: the matrix below lists them first</li>`
      : ""
  }${byGate > 0 ? html`<li class="muted">${byGate} in the upgrade bundles and their legs: named under each upgrade's verdict above</li>` : ""}`;
  const knownIds = [...new Set(all.filter((x) => isKnownIssue(x.v.status)).map((x) => x.v.id))];
  return html`<section id="verdict" class="banner" aria-label="verdict">
${gates.map((g) => gateBlock(cols[g.column]?.label ?? "", g.gate, gates.length > 1))}
<div class="counts v-${cls}"><p class="gate-title"><span class="word v-${cls}">${counts}</span> <span class="gate-head">${where}${changedNote}</span></p>${
    failed.length > 0 ? html`<ul class="gate-list fails">${failures}${moreFailures}</ul>` : ""
  }${
    knownIds.length > 0
      ? html`<p class="known-line">⚠ known issues (bugs declared for these versions, with their upstream reference; neither passed nor failed): ${knownIds.map((id, i) => html`${i > 0 ? ", " : ""}<a href="#${rowId(id)}"><code>${id}</code></a>`)}</p>`
      : ""
  }</div>
</section>`;
}
