/**
 * What `check` says of a judged bundle (helpers/check.ts CheckResult): as terminal text, as a step summary's
 * markdown, its counts in one line, and how its re-judged verdicts differ from those the run stored.
 */
import type { CheckResult, StoredComparison, StoredDifference } from "./check.ts";
import {
  code,
  type MarkdownText,
  markdown,
  markdownLines,
  markdownRow,
  type TerminalText,
  terminal,
  terminalLines,
} from "./output.ts";
import { skipReason, type Verdict } from "./properties/judge.ts";
import {
  bySeverity,
  countSentence,
  isKnownIssue,
  STATUS_COUNTED,
  STATUS_EMOJI,
  STATUS_TAG,
} from "./properties/status.ts";
import { assumedText, CHANGED_LABEL, CHANGED_TITLE } from "./properties/versions.ts";
import { formatDatapathConfig } from "./records/datapath-config.ts";
import { MessageBudget, shownValue } from "./records/evidence.ts";

/**
 * "62 passed, 0 failed, 3 known issues, 12 skipped": the closing line (known issues and changes in a new minor
 * only where there are), and "; every expectation assumed from 1.20" for a minor the suite has not declared.
 */
export function countLine(vs: readonly Pick<Verdict, "status" | "assumedFrom">[]): string {
  const from = vs.find((v) => v.assumedFrom)?.assumedFrom;
  return `${countSentence(vs)}${from ? `; every expectation ${assumedText(from)}` : ""}`;
}

/**
 * The step-summary form: the expectation, the observed value and the verdict per property; `opening` (the
 * comparison with the shipped bundle of the nearest declared version, its lines) comes first after the datapath.
 */
export function formatCheckMarkdown(r: CheckResult, opening: readonly MarkdownText[] = []): MarkdownText {
  const mark = STATUS_EMOJI;
  const known = r.verdicts.filter((v) => isKnownIssue(v.status));
  const notes = r.verdicts.filter((v) => v.note && v.status === "pass");
  const judged = bySeverity(r.verdicts.filter((v) => v.status !== "skip"));
  const skipped = r.verdicts.filter((v) => v.status === "skip");
  const changed = r.verdicts.filter((v) => v.status === "changed");
  const from = r.assumedFrom;
  const out: MarkdownText[] = [
    markdown`### ${r.mode} · Cilium ${r.cilium} — ${countLine(r.verdicts)}`,
    markdown``,
    markdown`Datapath: ${r.config ? formatDatapathConfig(r.config) : "not recorded (bundle older than the config topic)"}`,
    markdown``,
  ];
  if (from) out.push(markdown`> ${assumedLine(r.cilium, from)}`, markdown``);
  // the opening's own blank lines at its end are dropped: one blank line follows it
  const open = [...opening];
  while (open.length > 0 && open.at(-1) === "") open.pop();
  if (open.length > 0) out.push(...open, markdown``);
  if (changed.length > 0) {
    out.push(
      markdown`**${CHANGED_TITLE}** (\`declare-minor\` lists what to declare, with the raw lines):`,
      markdown``,
    );
    for (const v of changed)
      out.push(
        markdown`- ${code(v.id)}: ${v.checked ?? v.claim} — expected (${assumedText(from ?? "")}) ${shownValue(v.expected)}, observed ${shownValue(v.observed)}`,
      );
    out.push(markdown``);
  }
  if (known.length > 0) {
    out.push(
      markdown`**Known issues of this version** (neither pass nor fail; \`check --strict\` fails on them):`,
      markdown``,
    );
    for (const v of known)
      out.push(
        markdown`- ${code(v.id)}: ${v.deviation?.claim ?? v.claim} — expected ${shownValue(v.expected)}, observed ${shownValue(v.observed)} (${v.deviation?.upstream ?? ""})`,
      );
    out.push(markdown``);
  }
  if (notes.length > 0) {
    out.push(markdown`**News:**`, markdown``);
    for (const v of notes) out.push(markdown`- ${code(v.id)}: ${v.note ?? ""}`);
    out.push(markdown``);
  }
  out.push(markdown`| property | claim | expected | observed | verdict |`, markdown`|---|---|---|---|---|`);
  for (const v of judged)
    out.push(
      markdownRow([
        markdown`${code(v.id)}`,
        markdown`${v.checked ?? v.claim}`,
        v.assumedFrom
          ? markdown`${shownValue(v.expected)} (${assumedText(v.assumedFrom)})`
          : markdown`${shownValue(v.expected)}`,
        markdown`${shownValue(v.observed)}`,
        markdown`${mark[v.status]}`,
      ]),
    );
  out.push(markdown``);
  if (skipped.length > 0) {
    out.push(
      markdown`<details><summary>${skipped.length} skipped, each with its reason</summary>`,
      markdown``,
      markdown`| property | reason |`,
      markdown`|---|---|`,
    );
    for (const v of skipped) out.push(markdownRow([markdown`${code(v.id)}`, markdown`${skipReason(v)}`]));
    out.push(markdown``, markdown`</details>`, markdown``);
  }
  for (const l of formatStoredMarkdown(r.stored)) out.push(l);
  out.push(markdown``);
  return markdownLines(out);
}

/**
 * What a check of a minor the suite has not declared says first: what its verdicts were judged against. Plain
 * text with the bundle's version in it: printed through the `terminal` or `markdown` tag.
 */
export function assumedLine(cilium: string, from: string): string {
  return `expectations: ${assumedText(from)} — Cilium ${cilium} is of a minor the suite has not declared, so every verdict is judged against ${from}'s expectations and marked so; CHANGED: ${CHANGED_LABEL}`;
}

/** check's text: `opening` (the comparison with the nearest shipped bundle, its lines) right after the header. */
export function formatCheck(
  r: CheckResult,
  opening: readonly TerminalText[] = [],
  messages: MessageBudget = new MessageBudget(),
): TerminalText {
  const from = r.assumedFrom;
  const lines: TerminalText[] = [
    terminal`${r.bundle}: mode ${r.mode}, Cilium ${r.cilium} (${r.origin.split(":")[0]})`,
    // each a line of the bundle's own: said after its own words, so that no bundle text starts a line
    ...(r.neverRunHere ?? []).map((l) => terminal`never run here: ${l.replace(/^never run here: /, "")}`),
    ...(from ? [terminal`${assumedLine(r.cilium, from)}`] : []),
    terminal`datapath: ${r.config ? formatDatapathConfig(r.config) : "not recorded (a bundle older than the config topic: each property's declared configuration assumed)"}`,
    ...(opening.length > 0 ? [...opening, terminal``] : []),
  ];
  const tag = STATUS_TAG;
  // the tags' column is as wide as the widest present (the usual five letters unless a change is shown)
  const width = Math.max(...r.verdicts.map((v) => tag[v.status].length), 5);
  for (const v of bySeverity(r.verdicts)) {
    const what =
      v.status === "skip"
        ? skipReason(v)
        : isKnownIssue(v.status)
          ? `expected ${shownValue(v.expected)}, observed ${shownValue(v.observed)}: known issue of Cilium ${v.deviation?.versions}`
          : `expected ${shownValue(v.expected)}, observed ${shownValue(v.observed)}`;
    lines.push(
      terminal`  ${tag[v.status].padEnd(width)}  ${v.id.padEnd(44)} ${what}${v.assumedFrom ? ` (${assumedText(v.assumedFrom)})` : ""}`,
    );
  }
  // a message's lines are the judge's own (it shows the bundle's strings in them: helpers/properties/judge.ts)
  const fails = r.verdicts.filter((v) => v.status === "fail");
  if (fails.length > 0) {
    lines.push(terminal``);
    for (const v of fails) for (const l of messages.take(v.message).split("\n")) lines.push(terminal`${l}`);
    lines.push(terminal``);
  }
  const changed = r.verdicts.filter((v) => v.status === "changed");
  if (changed.length > 0) {
    lines.push(
      terminal``,
      terminal`${CHANGED_TITLE} (\`datapath-conformance declare-minor ${r.bundle}\` lists what to declare, with the raw lines):`,
    );
    for (const v of changed) for (const l of messages.take(v.message).split("\n")) lines.push(terminal`${l}`);
    lines.push(terminal``);
  }
  const known = r.verdicts.filter((v) => isKnownIssue(v.status));
  if (known.length > 0) {
    lines.push(
      terminal``,
      terminal`Known issues of Cilium ${from ? `${[...new Set(known.map((v) => v.deviation?.versions ?? "?"))].join(", ")}, shown by ${r.cilium} (${assumedText(from)})` : r.cilium} (${STATUS_COUNTED["known-issue"]}: neither pass nor fail; --strict fails on them):`,
    );
    for (const v of known)
      lines.push(
        terminal`  ${v.id}: ${v.deviation?.claim ?? v.claim}`,
        terminal`    ${v.deviation?.upstream ?? ""}`,
      );
    lines.push(terminal``);
  }
  const news = r.verdicts.filter((v) => v.status === "pass" && v.note);
  if (news.length > 0) {
    lines.push(terminal``, terminal`News:`);
    for (const v of news) lines.push(terminal`  ${v.id}: ${v.note}`);
    lines.push(terminal``);
  }
  lines.push(terminal`${countLine(r.verdicts)}`);
  for (const l of formatStored(r.stored)) lines.push(l);
  lines.push(terminal``);
  return terminalLines(lines);
}

/** The differences with the stored verdicts listed at most (a bundle may store any number: the rest are counted). */
export const STORED_DIFFERENCES_SHOWN = 200;

/** What `check` says about the stored verdicts: reproduced exactly, or each difference with its reason. */
export function formatStored(s: StoredComparison): TerminalText[] {
  const cut = (x: string) => (x.length > 70 ? `${x.slice(0, 67)}...` : x);
  const { head, shown, more } = storedSummary(s);
  const out = head.map((h) => terminal`${h}`);
  for (const d of shown)
    out.push(terminal`  ${d.id.padEnd(44)} ${d.what}: ${cut(d.was)} → ${cut(d.now)}  (${d.reason})`);
  if (more > 0) out.push(terminal`  ... and ${more} more difference(s)`);
  return out;
}

/** The same, as markdown list items. */
function formatStoredMarkdown(s: StoredComparison): MarkdownText[] {
  const cut = (x: string) => (x.length > 70 ? `${x.slice(0, 67)}...` : x);
  const { head, shown, more } = storedSummary(s);
  const out = head.map((h) => markdown`${h}`);
  for (const d of shown)
    out.push(markdown`- ${d.id.padEnd(44)} ${d.what}: ${cut(d.was)} → ${cut(d.now)}  (${d.reason})`);
  if (more > 0) out.push(markdown`- ... and ${more} more difference(s)`);
  return out;
}

function storedSummary(s: StoredComparison): { head: string[]; shown: StoredDifference[]; more: number } {
  if (s.format === "none")
    return {
      head: ["no stored verdicts to compare with (the bundle has no verdicts.jsonl, or an empty one)"],
      shown: [],
      more: 0,
    };
  const head: string[] = [];
  if (s.format === "older")
    head.push(
      "stored verdicts.jsonl: recorded with an older suite (evidence as plain lines); this check's evidence is quoted at its place",
    );
  if (s.differences.length === 0) {
    if (s.format === "current") head.push("stored verdicts.jsonl: reproduced exactly");
    else head.push("stored verdicts.jsonl: every status, expectation and observed value reproduced");
    return { head, shown: [], more: 0 };
  }
  head.push(`stored verdicts.jsonl: ${s.differences.length} difference(s), each with its reason:`);
  // what was assumed differs for every verdict at once (a relabelled bundle, a minor declared since): one line
  const assumed = s.differences.filter((d) => d.what === "assumed");
  const first = assumed[0];
  const together = first !== undefined && assumed.every((d) => d.was === first.was && d.now === first.now);
  const listed = together
    ? [{ ...first, id: `(${assumed.length} verdicts)` }, ...s.differences.filter((d) => d.what !== "assumed")]
    : s.differences;
  const shown = listed.slice(0, STORED_DIFFERENCES_SHOWN);
  return { head, shown, more: listed.length - shown.length };
}
