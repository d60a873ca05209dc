/**
 * `check --junit FILE` (issue 37): a bundle's re-judged verdicts as a JUnit report, offline, for a CI that reads
 * JUnit and has only a bundle (an artifact, another team's run). One <testsuite> per bundle, one <testcase> per
 * property, named as the conformance run names it (`id: claim`):
 * - pass: the test case alone;
 * - fail (and any status that is neither a pass, a skip nor a known issue): <failure> whose message is expected vs
 *   observed, its text those two, the verdict's first evidence line and its message;
 * - changed in the new minor (issue 38: a minor the suite has not declared, whose expectation assumed from the
 *   newest declared minor did not hold): a <failure> of type `changed` whose message says so, with the
 *   `changed-in-new-minor` property the conformance run's JUnit gives it (scripts/junit-summary.ts names those);
 * - known issue: <skipped> whose message names it, the Cilium versions it is declared for, its claim and its
 *   upstream reference (a bug the version is known to have: not a pass, and not a failure of this cluster);
 * - skip: <skipped> with its reason.
 * Every verdict of such a minor carries the `assumed-from` property, as in the run's JUnit.
 * Every string from a bundle goes through `xmlText` (XML 1.0's forbidden characters as U+FFFD, then entities).
 */

import { hostname } from "node:os";
import type { CheckResult } from "./check.ts";
import { xmlText } from "./output.ts";
import { skipReason, type Verdict } from "./properties/judge.ts";
import { isKnownIssue, outcomeOf } from "./properties/status.ts";
import { assumedText, CHANGED_LABEL } from "./properties/versions.ts";
import { MessageBudget, showItem, shownValue } from "./records/evidence.ts";

/** The verdict's first evidence line, and the first raw line it quotes when that is another item. */
export function firstEvidence(v: Pick<Verdict, "evidence">): string {
  const items = Array.isArray(v.evidence) ? v.evidence : [];
  const first = items[0];
  if (!first) return "(no evidence)";
  const quote = items.find((e) => "quote" in e);
  return quote && quote !== first ? `${showItem(first)}\n${showItem(quote)}` : showItem(first);
}

/** A known issue in one line: the versions, what goes wrong, its upstream reference. */
export function knownIssueText(v: Verdict, cilium: string): string {
  const d = v.deviation;
  return `known issue of Cilium ${d?.versions ?? cilium}: ${d?.claim ?? v.claim}${d?.upstream ? ` (${d.upstream})` : ""} — expected ${shownValue(String(v.expected))}, observed ${shownValue(String(v.observed))}`;
}

const attr = (name: string, value: unknown) => ` ${name}="${xmlText(String(value ?? ""))}"`;

function testcase(r: CheckResult, v: Verdict, messages: MessageBudget): string {
  const open = `    <testcase${attr("classname", `${v.topic} [${r.mode}]`)}${attr("name", `${v.id}: ${v.claim}`)} time="0">`;
  const property = (name: string, value: unknown) =>
    `<property${attr("name", name)}${attr("value", value)}/>`;
  const assumed = v.assumedFrom ? property("assumed-from", assumedText(v.assumedFrom)) : "";
  const props = (extra = "") =>
    `\n      <properties>${property("expected", shownValue(String(v.expected)))}${property("observed", shownValue(String(v.observed)))}${assumed}${extra}</properties>`;
  const close = "\n    </testcase>";
  if (v.status === "pass") return `${open}${props()}${close}`;
  if (v.status === "skip") {
    const reason = skipReason(v);
    const marked = assumed ? `\n      <properties>${assumed}</properties>` : "";
    return `${open}\n      <skipped${attr("message", reason)}>${xmlText(reason)}</skipped>${marked}${close}`;
  }
  if (isKnownIssue(v.status)) {
    const text = knownIssueText(v, r.cilium);
    const known = property(
      "known-issue",
      `${v.deviation?.claim ?? v.claim} (${v.deviation?.upstream ?? ""})`,
    );
    return `${open}\n      <skipped${attr("message", text)}>${xmlText(`${text}\n${firstEvidence(v)}`)}</skipped>${props(known)}${close}`;
  }
  // a change in a new minor fails as a failure does, saying what it is
  const changed = v.status === "changed";
  const message = `${changed ? `changed in the new minor (${assumedText(v.assumedFrom ?? "?")}): ` : ""}expected ${shownValue(String(v.expected))}, observed ${shownValue(String(v.observed))}`;
  const body = `${message}\n${firstEvidence(v)}\n\n${messages.take(String(v.message ?? ""))}`;
  return `${open}\n      <failure${attr("message", message)}${attr("type", v.status)}>${xmlText(body)}</failure>${props(changed ? property("changed-in-new-minor", CHANGED_LABEL) : "")}${close}`;
}

/** The JUnit document for bundles judged by `check`. */
export function checkJUnit(results: CheckResult[], now: Date = new Date()): string {
  // every failure's message, together under the run's cap (issue 45)
  const messages = new MessageBudget();
  const count = (vs: Verdict[], f: (v: Verdict) => boolean) => vs.filter(f).length;
  const failed = (v: Verdict) => outcomeOf(v.status) === "fail";
  const skipped = (v: Verdict) => outcomeOf(v.status) === "skip";
  const all = results.flatMap((r) => r.verdicts);
  const suites = results.map((r) => {
    const head = `  <testsuite${attr("name", `${r.bundle} [${r.mode}, Cilium ${r.cilium}]`)}${attr("tests", r.verdicts.length)}${attr("failures", count(r.verdicts, failed))} errors="0"${attr("skipped", count(r.verdicts, skipped))} time="0"${attr("timestamp", now.toISOString())}${attr("hostname", hostname())}>`;
    const props = `    <properties><property${attr("name", "mode")}${attr("value", r.mode)}/><property${attr("name", "cilium")}${attr("value", r.cilium)}/><property${attr("name", "origin")}${attr("value", r.origin)}/><property${attr("name", "bundle")}${attr("value", r.bundle)}/></properties>`;
    return [head, props, ...r.verdicts.map((v) => testcase(r, v, messages)), "  </testsuite>"].join("\n");
  });
  return `<?xml version="1.0" encoding="UTF-8" ?>\n<testsuites name="datapath-conformance check"${attr("tests", all.length)}${attr("failures", count(all, failed))} errors="0"${attr("skipped", count(all, skipped))} time="0">\n${suites.join("\n")}\n</testsuites>\n`;
}

/**
 * `upgrade --junit FILE` (issue 42: the CLI, the step summary, the report and JUnit say the same word): one
 * <testsuite> per path and mode, one <testcase> per run named by its bundle, and, for several runs, one for the
 * path's answer. HELD passes; BROKEN, REGRESSED and INCONCLUSIVE are <failure>s of that type, the word first in the
 * message, the gate's headline and each named item in the text.
 */
export function upgradeJUnit(
  paths: {
    path: string;
    runs: { bundle: string; word: string; headline: string; items: string[] }[];
    answer?: { word: string; headline: string; items: string[] };
  }[],
): string {
  const testcase = (name: string, c: { word: string; headline: string; items: string[] }) =>
    c.word === "HELD"
      ? `    <testcase${attr("classname", "upgrade")}${attr("name", name)}/>`
      : `    <testcase${attr("classname", "upgrade")}${attr("name", name)}>\n      <failure${attr("type", c.word)}${attr("message", `${c.word}: ${c.headline}`)}>${xmlText([c.headline, ...c.items].join("\n"))}</failure>\n    </testcase>`;
  const suites = paths.map((p) => {
    const cases = [
      ...p.runs.map((r) => testcase(r.bundle, r)),
      ...(p.answer ? [testcase(`${p.path} (${p.runs.length} runs)`, p.answer)] : []),
    ];
    const failures = [...p.runs, ...(p.answer ? [p.answer] : [])].filter((x) => x.word !== "HELD").length;
    return `  <testsuite${attr("name", `upgrade ${p.path}`)}${attr("tests", cases.length)}${attr("failures", failures)}${attr("hostname", hostname())}>\n${cases.join("\n")}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join("\n")}\n</testsuites>\n`;
}
