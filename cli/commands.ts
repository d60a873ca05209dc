// One file over 450 lines: every CLI command's handler behind cli/registry.ts: each short, sharing the option readers and outputs
/**
 * The CLI's commands. Each loads what it needs when it runs (`--help`, `--version` and `formats` start
 * without the topics, the report or the cluster code).
 */

import { closeSync, createReadStream, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { createGunzip, gunzipSync } from "node:zlib";
import { OTHER_RUN_VARIABLES, RUN_INPUTS } from "../clusters/run-input-list.ts";
import type { BundleMeta } from "../helpers/bundle/read.ts";
import { UserError } from "../helpers/errors.ts";
import type { MeasuredBundle } from "../helpers/measure/summary.ts";
import {
  type AnnotationKind,
  annotation,
  annotationsCapped,
  MarkdownBudget,
  markdown,
  markdownLines,
  ownLines,
  terminal,
  terminalLines,
} from "../helpers/output.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import {
  countStatuses,
  failsRun,
  isFailure,
  isKnownIssue,
  type Status,
} from "../helpers/properties/status.ts";
import { oneOf, stringOption } from "./args.ts";
import type { Io } from "./io.ts";
import {
  appendStepSummary,
  printAnnotations,
  printDebugStack,
  printErr,
  printJson,
  printMarkdown,
  printOut,
  writeJsonLines,
} from "./print.ts";
import type { Command, OptionSpec, OptionValues, ParsedCommandArgs } from "./registry.ts";

const topics = async () => (await import("../suites/topics.ts")).TOPICS;

export const parse: Command = {
  name: "parse",
  synopsis: "FORMAT [FILE|-] [--transcript] [--ndjson]",
  summary: "raw command output → JSON on stdout",
  details:
    "Reads FILE (gzip too: a bundle's raw/<topic>/NNN-….txt.gz), or standard input when FILE is - or absent. `datapath-conformance formats` lists the formats. " +
    "A line that cannot be read (cut off, two lines joined, binary data) exits 2 naming it; a record the output " +
    "cannot vouch for (its last line has no newline after it) is kept, with a warning on stderr and in " +
    "`parseWarnings`.",
  options: {
    transcript: {
      type: "boolean",
      help: "the input is a pasted terminal transcript: strip prompts and fences",
    },
    ndjson: {
      type: "boolean",
      help: "one record a line, streamed (the line-per-record formats: bpf-ct-list)",
    },
  },
  maxPositionals: 2,
  run: async ({ positionals, values }, io) => {
    const { FORMAT_NAMES, FORMATS } = await import("../helpers/parse/index.ts");
    const [format, file = "-"] = positionals;
    if (!format) throw new UserError(`which format? valid: ${FORMAT_NAMES.join(", ")}`);
    const spec = FORMATS[format];
    if (!spec)
      throw new UserError(`unknown format ${JSON.stringify(format)}; valid: ${FORMAT_NAMES.join(", ")}`);
    if (values.ndjson) {
      const { forEachBlock, RowBuffer, STREAMING } = await import("../helpers/parse/stream.ts");
      const stream = STREAMING[format];
      if (!stream)
        throw new UserError(
          `--ndjson streams the line-per-record formats (${Object.keys(STREAMING).join(", ")}); ${format} prints one JSON document`,
        );
      if (values.transcript)
        throw new UserError("--ndjson reads raw output; strip a transcript first (parse without --ndjson)");
      const rows = new RowBuffer();
      // what each block's parse passed over or doubts (a cut-off last line), said on stderr at the end
      const { formatNotes, withNotes } = await import("../helpers/parse/lines.ts");
      const said: string[] = [];
      const source = file === "-" ? io.stdin() : readStream(file);
      const flush = async () => {
        const bytes = rows.take();
        if (bytes) await writeJsonLines(io, bytes);
      };
      await forEachBlock(source, async (block, offset) => {
        let read: number;
        try {
          const { value, notes } = withNotes(() => stream(block, offset, (json) => rows.add(json)));
          read = value;
          const note = formatNotes(format, notes);
          if (note) said.push(note);
        } catch (err) {
          // the records before a bad line are written first, then the line is named
          await flush();
          throw err;
        }
        await flush();
        return read;
      });
      if (said.length > 0) printErr(io, ownLines(said.join("")));
      return 0;
    }
    let input = file === "-" ? await io.readStdin() : readText(file);
    if (values.transcript) input = (await import("../helpers/parse/transcript.ts")).stripTranscript(input);
    // what the parser passed over without failing (elided lines, unknown fields kept in `extra`) goes to stderr;
    // what it doubts (a last line that may be cut off) goes there too, and into the result as `parseWarnings`
    const { formatNotes, withNotes } = await import("../helpers/parse/lines.ts");
    const { value, notes } = withNotes(() => spec.parse(input));
    const result =
      notes.warnings.length > 0 && value && typeof value === "object" && !Array.isArray(value)
        ? { ...value, parseWarnings: notes.warnings }
        : value;
    printJson(io, result);
    const said = formatNotes(format, notes);
    if (said) printErr(io, ownLines(said));
    return 0;
  },
};

export const formats: Command = {
  name: "formats",
  synopsis: "",
  summary: "list the output formats `parse` reads, with the command that prints each",
  maxPositionals: 0,
  run: async (_args, io) => {
    const { FORMAT_NAMES, FORMATS } = await import("../helpers/parse/index.ts");
    for (const name of FORMAT_NAMES) printOut(io, terminal`${name.padEnd(20)} ${FORMATS[name]?.command}\n`);
    return 0;
  },
};

export const expectations: Command = {
  name: "expectations",
  synopsis: "[--mode kpr|kube-proxy] [--cilium X.Y[.Z]] [--format text|md|json]",
  summary: "the expectation table: every property's expected value per mode (and per Cilium version)",
  options: {
    mode: { type: "string", value: "kpr|kube-proxy", help: "one mode's column only" },
    cilium: { type: "string", value: "X.Y[.Z]", help: "resolve expectations for this Cilium minor or patch" },
    format: {
      type: "string",
      value: "text|md|json",
      help: "plain text for a terminal (default), a markdown table, or JSON",
    },
  },
  maxPositionals: 0,
  run: async ({ values }, io) => {
    const { expectationMarkdown, expectationRows, expectationText } = await import(
      "../helpers/properties/table.ts"
    );
    const { PROPERTIES } = await import("../suites/topics.ts");
    const mode = (await import("../clusters/choices.ts")).parseOptionalMode(stringOption(values, "mode"));
    const format = oneOf("format", stringOption(values, "format"), ["text", "md", "json"] as const) ?? "text";
    const given = stringOption(values, "cilium");
    // the same validation as plan, lab run and CILIUM_VERSION: a supported minor or a patch of one
    if (given !== undefined) (await import("../clusters/versions.ts")).resolveCilium(given);
    const cilium = given?.replace(/^v/, "");
    if (format === "json") printJson(io, expectationRows(PROPERTIES, { mode, cilium }));
    else if (format === "md") printOut(io, ownLines(expectationMarkdown(PROPERTIES, { mode, cilium })));
    else printOut(io, ownLines(expectationText(PROPERTIES, { mode, cilium })));
    return 0;
  },
};

export const check: Command = {
  name: "check",
  synopsis: "BUNDLE|DIR… [--markdown] [--strict] [--no-nearest] [--junit FILE]",
  summary:
    "re-judge evidence bundles offline from their raw outputs; exit 1 when a property fails or changed in a new minor (or, with --strict, shows a known issue)",
  details:
    'A DIR that is not a bundle stands for every bundle in it or below it (suites/bundles/1.19: its five), each judged and named in path order, with one line per bundle at the end. A known issue is a bug the declarations name for that Cilium version, with its upstream reference: the run showed it, so the claim does not hold, but the version is known to do it. check lists known issues apart and, by default, exits 0 on them: the question check answers is whether the cluster does what its version is known to do, and a gate that is red for as long as a version has an open bug is a gate nobody reads (compare, which answers whether an upgrade made things worse, fails on a new known issue). --strict exits 1 on a known issue too. A bundle of a Cilium minor the suite has not declared is judged on the newest declared minor\'s expectations, every verdict marked "assumed from X.Y"; one that does not hold is CHANGED (changed in the new minor — a regression or a new behaviour, to be declared: exit 1; declare-minor lists them with their raw lines). A bundle of a version the suite ships no bundle of opens on its comparison with the shipped bundle of the nearest declared version of its mode and profile (--no-nearest leaves it out).',
  options: {
    markdown: { type: "boolean", help: "a markdown table (a CI step summary)" },
    strict: { type: "boolean", help: "exit 1 on a known issue as on a failure" },
    "no-nearest": {
      type: "boolean",
      help: "do not compare a bundle of a version the suite ships none of with the nearest shipped one",
    },
    junit: {
      type: "string",
      value: "FILE",
      help: "also write the verdicts as a JUnit report: a failure with expected, observed and its first evidence line; a known issue or a skip as a skipped test case with its reason; a change in a new minor is a failure",
    },
  },
  run: async ({ positionals, values }, io) => {
    if (positionals.length === 0)
      throw new UserError("which bundle? e.g. check suites/bundles/1.20/kpr, or a folder of them");
    const { compareWithNearest, formatComparisonLines, formatComparisonText } = await import(
      "../helpers/compare.ts"
    );
    const { bundlesOf } = await import("../helpers/bundle/read.ts");
    const dirs = bundlesOf(positionals);
    // where the JUnit report goes is checked before any work (a folder, or inside a bundle: one line)
    const junit = stringOption(values, "junit");
    const { checkOutputPath, writeOutput } = await import("../helpers/write-output.ts");
    if (junit !== undefined) checkOutputPath(junit, dirs, "--junit");
    const judged: import("../helpers/check.ts").CheckResult[] = [];
    const { checkBundle } = await import("../helpers/check.ts");
    const { formatCheck, formatCheckMarkdown } = await import("../helpers/check-format.ts");
    const all = await topics();
    // a change in a new minor is no pass: its assumed expectation did not hold, and it waits to be declared
    let failed = false;
    const totals: string[] = [];
    const notes: { kind: AnnotationKind; title: string; message: string }[] = [];
    // every bundle's markdown together stays under a step summary's limit, its messages under the run's (issue 45)
    const budget = new MarkdownBudget();
    const { MessageBudget } = await import("../helpers/records/evidence.ts");
    const messages = new MessageBudget();
    for (const dir of dirs) {
      const r = await readingBundles([dir], () => checkBundle(dir, all));
      judged.push(r);
      // a version the suite ships no bundle of opens on its comparison with the nearest shipped one
      const near = values["no-nearest"]
        ? null
        : await readingBundles([dir], () => compareWithNearest(r, all));
      if (values.markdown) {
        const md = budget.take(
          formatCheckMarkdown(
            r,
            near ? [markdown`${near.why}`, markdown``, ...formatComparisonLines(near.comparison)] : [],
          ),
        );
        if (md) printMarkdown(io, md);
      } else
        printOut(io, formatCheck(r, near ? formatComparisonText(near.comparison, near.why) : [], messages));
      if (dirs.length > 1) printOut(io, terminal`\n`);
      if (r.verdicts.some((v) => failsRun(v.status, values.strict === true))) failed = true;
      // in a GitHub Actions step, each failure (a change in a new minor too, and a known issue) is an annotation
      for (const v of r.verdicts)
        if (isFailure(v.status) || isKnownIssue(v.status))
          notes.push({
            kind: !isKnownIssue(v.status) || values.strict ? "error" : "warning",
            title: v.id,
            message: `${isKnownIssue(v.status) ? `known issue of Cilium ${v.deviation?.versions ?? r.cilium}: ` : ""}${v.status === "changed" ? `changed in the new minor (assumed from ${v.assumedFrom ?? "?"}): ` : ""}expected ${v.expected}, observed ${v.observed} (bundle ${dir})`,
          });
      const n = (status: Status) => countStatuses(r.verdicts)[status];
      totals.push(
        `${n("pass")} passed, ${n("fail")} failed${n("changed") ? `, ${n("changed")} changed in the new minor` : ""}${n("known-issue") ? `, ${n("known-issue")} known issue(s)` : ""}, ${n("skip")} skipped`,
      );
    }
    const cut = budget.note();
    if (values.markdown && cut) printMarkdown(io, cut);
    // several bundles (a folder of them): one line each at the end, so the outcome is not scrolled away
    if (dirs.length > 1 && !values.markdown) {
      const width = dirs.reduce((w, d) => Math.max(w, d.length), 0);
      const lines = dirs.map((d, i) => terminal`  ${d.padEnd(width)}  ${totals[i]}`);
      printOut(io, terminalLines([terminal`${dirs.length} bundles:`, ...lines, terminal``]));
    }
    if (junit !== undefined) {
      const { checkJUnit } = await import("../helpers/check-junit.ts");
      writeOutput(junit, checkJUnit(judged), dirs, "--junit");
      printErr(io, terminal`wrote ${junit}\n`);
    }
    printAnnotations(
      io,
      annotationsCapped(notes, (n, kind) => ({
        title: "check",
        message: `${n} more ${kind === "error" ? "failing properties" : "known issues"}: the step's log names each`,
      })),
    );
    return failed ? 1 : 0;
  },
};

/** `--markdown`: what a command that prints a document on a terminal prints for a step summary instead. */
const MARKDOWN: OptionSpec = {
  type: "boolean",
  help: "markdown instead of terminal text (a CI step summary: >> $GITHUB_STEP_SUMMARY)",
};

export const compare: Command = {
  name: "compare",
  synopsis: "BUNDLE_A BUNDLE_B [--markdown]",
  summary:
    "property-by-property comparison, worst first; exit 1 on a verdict regression, a new known issue or a behaviour change",
  options: { markdown: MARKDOWN },
  maxPositionals: 2,
  run: async ({ positionals, values }, io) => {
    const [a, b] = positionals;
    if (!a || !b) throw new UserError("needs two bundles: compare BUNDLE_A BUNDLE_B");
    const { compareBundles, formatComparison, formatComparisonTerminal } = await import(
      "../helpers/compare.ts"
    );
    const all = await topics();
    const c = await readingBundles([a, b], () => compareBundles(a, b, all));
    if (values.markdown) printMarkdown(io, formatComparison(c));
    else printOut(io, formatComparisonTerminal(c));
    return c.regressed ? 1 : 0;
  },
};

export const declareMinor: Command = {
  name: "declare-minor",
  synopsis: "BUNDLE|DIR…",
  summary:
    "from a run of a minor the suite has not declared: what to declare for it, each property with its observed value and raw lines",
  details:
    "BUNDLE is a run of a Cilium minor newer than every declared one (its verdicts assumed from the newest declared minor). Lists, per bundle (one mode each: give both), the properties whose assumed expectation did not hold (changed in the new minor: a new behaviour to declare with its source, or a regression to declare as a known issue with its upstream reference), those that held only through what the assumed minor declares for itself (to declare again for the new minor), and how many held under the default or were not observed. Each with the topic file it is declared in, expected vs observed, the raw lines at their place in the bundle, and the entry to write. A bundle of a declared minor is refused (nothing was assumed).",
  run: async ({ positionals }, io) => {
    if (positionals.length === 0)
      throw new UserError(
        "which bundle? e.g. declare-minor results/<run-id>/kpr results/<run-id>/kube-proxy",
      );
    const { bundlesOf } = await import("../helpers/bundle/read.ts");
    const { checkBundle } = await import("../helpers/check.ts");
    const { formatDeclaration, toDeclare } = await import("../helpers/declare.ts");
    const all = await topics();
    const suites = join(import.meta.dirname, "..", "suites");
    const folders = readdirSync(suites);
    const topicFile = (t: string) => {
      const d = folders.find((f) => f.replace(/^\d+-/, "") === t);
      return d ? `suites/${d}/${t}.topic.ts` : `the ${t} topic`;
    };
    const dirs = bundlesOf(positionals);
    for (const [i, dir] of dirs.entries()) {
      const r = await readingBundles([dir], () => checkBundle(dir, all));
      const d = toDeclare(r, all);
      if (!d)
        throw new UserError(
          `${dir}: Cilium ${r.cilium} is of a declared minor: nothing was assumed, so there is nothing to declare (declare-minor reads a run of a minor newer than every declared one)`,
        );
      printOut(
        io,
        i > 0
          ? terminalLines([terminal``, formatDeclaration(d, topicFile)])
          : formatDeclaration(d, topicFile),
      );
    }
    return 0;
  },
};

export const upgrade: Command = {
  name: "upgrade",
  synopsis:
    "BUNDLE|DIR… [--fresh-from DIR] [--fresh-to DIR] [--allow-known] [--junit FILE] [--markdown] [--step-summary FILE]",
  summary:
    "is this upgrade safe? HELD, BROKEN, REGRESSED or INCONCLUSIVE for an upgrade bundle, or for several runs of a path",
  details:
    "BUNDLE is what a run with UPGRADE_TO (and ROLLBACK=1) wrote: the legs under load, and every topic run again on the same cluster after each leg (its after-upgrade/ and after-rollback/ bundles). One word, exit 0 only for HELD. BROKEN: something broke and the bundle proves it — an agent not on the target, a connection answered by another backend, a drop of an unexpected reason, a property failing after a leg, or a failed request, broken connection or outage with datapath evidence at its time (from the leg's captures of data packets on every node and its drop monitors: a packet that left one node and never reached the next, one held there, an RST no backend sent, a drop). REGRESSED: the target shows a known issue the source did not (what compare calls a new known issue; --allow-known accepts them). INCONCLUSIVE: a failure without datapath evidence (what is missing is named), the load's own client stalled, or a property the fresh install of that version judges was skipped after a leg. The source's known issues come from the run's own topics before the upgrade, else --fresh-from, else the shipped fresh bundle of that minor and mode; the fresh install of each leg's version is --fresh-to (and --fresh-from for the rollback), else the shipped one. Several bundles of one path and mode (or a DIR holding them) are answered together: the worst word any run earned, and each finding as a rate over the runs. The workflow's upgrade job runs this (scripts/upgrade-job.sh).",
  options: {
    "fresh-from": { type: "string", value: "DIR", help: "a fresh bundle of the source version" },
    "fresh-to": { type: "string", value: "DIR", help: "a fresh bundle of the target version" },
    "allow-known": {
      type: "boolean",
      help: "accept known issues new on the target: HELD with them listed (exit 0) instead of REGRESSED",
    },
    strict: {
      type: "boolean",
      help: "kept for older jobs: known issues new on the target fail by default now",
    },
    junit: {
      type: "string",
      value: "FILE",
      help: "also write the answer as a JUnit report: a test case per run",
    },
    markdown: MARKDOWN,
    "step-summary": {
      type: "string",
      value: "FILE",
      help: "also append the markdown to FILE ($GITHUB_STEP_SUMMARY), or the refusal, escaped as markdown",
    },
  },
  run: async (args, io) => {
    const summaryFile = stringOption(args.values, "step-summary");
    try {
      return await judgeUpgradeBundles(args, io, summaryFile);
    } catch (err) {
      // a refused bundle is said in the summary too, as markdown: its message quotes the bundle's strings
      if (summaryFile && err instanceof UserError)
        appendStepSummary(
          summaryFile,
          markdown`**The upgrade gate refused the bundle** (exit ${err.exitCode}): ${err.message}`,
        );
      throw err;
    }
  },
};

/** `upgrade`'s judgement: each path's answer on standard output (and to `summaryFile`), its annotations, its exit code. */
async function judgeUpgradeBundles(
  { positionals, values }: ParsedCommandArgs,
  io: Required<Io>,
  summaryFile: string | undefined,
): Promise<number> {
  if (positionals.length === 0)
    throw new UserError("which upgrade bundle? e.g. upgrade suites/bundles/upgrade-1.19-1.20/kpr");
  const { checkOutputPath, writeOutput } = await import("../helpers/write-output.ts");
  const junit = stringOption(values, "junit");
  if (junit !== undefined) checkOutputPath(junit, positionals, "--junit");
  const { bundlesOf, readMeta } = await import("../helpers/bundle/read.ts");
  const { gateBundles, gateOf, pathKey } = await import("../helpers/upgrade-inputs.ts");
  const { judgePath } = await import("../helpers/upgrade-gate.ts");
  const { upgradeJUnit } = await import("../helpers/check-junit.ts");
  // a folder stands for the upgrade bundles in it (their legs' nested bundles are theirs, not runs)
  // a folder that is not a bundle stands for the upgrade bundles under it (the fresh ones beside them are not runs)
  const dirs = positionals.flatMap((p) => {
    const found = bundlesOf([p]);
    if (found.length === 1 && found[0] === p) return found;
    const runs = found.filter((d) => readMeta(d).upgrade);
    if (runs.length === 0) throw new UserError(`${p} holds no upgrade bundle (a run with UPGRADE_TO)`);
    return runs;
  });
  const all = await topics();
  const options = {
    freshFrom: stringOption(values, "fresh-from") ?? null,
    freshTo: stringOption(values, "fresh-to") ?? null,
    allowKnown: values["allow-known"] === true,
  };
  const paths = new Map<string, string[]>();
  for (const d of dirs) {
    const key = pathKey(d);
    paths.set(key, [...(paths.get(key) ?? []), d]);
  }
  let exit: 0 | 1 = 0;
  const notes: { kind: "error" | "warning" | "notice"; text: string }[] = [];
  const cases: Parameters<typeof upgradeJUnit>[0] = [];
  const itemsOf = (g: import("../helpers/upgrade-gate.ts").GateResult) =>
    [...g.broken, ...g.inconclusive, ...g.unjudged]
      .map((b) => `${b.what}: ${b.line}`)
      .concat(g.newKnownIssues.map((k) => `known issue new on the target: ${k.id}: ${k.detail}`));
  for (const [key, group] of paths) {
    const gates = await readingBundles(
      group.flatMap((d) => gateBundles(d, options)),
      async () => {
        const out = [];
        for (const d of group) out.push({ bundle: d, gate: await gateOf(d, all, options) });
        return out;
      },
    );
    cases.push({
      path: key,
      runs: gates.map((x) => ({
        bundle: x.bundle,
        word: x.gate.word,
        headline: x.gate.headline,
        items: itemsOf(x.gate),
      })),
    });
    if (gates.length === 1) {
      const g = (gates[0] as (typeof gates)[number]).gate;
      if (values.markdown) printMarkdown(io, markdownLines([g.summary, markdown``]));
      else printOut(io, g.text);
      if (summaryFile) appendStepSummary(summaryFile, g.summary);
      if (g.exitCode !== 0) exit = 1;
      notes.push({
        kind: g.exitCode !== 0 ? "error" : g.newKnownIssues.length > 0 ? "warning" : "notice",
        text: g.headline,
      });
    } else {
      const p = judgePath(key, gates);
      (cases.at(-1) as (typeof cases)[number]).answer = {
        word: p.word,
        headline: p.headline,
        items: p.rates.map((x) => `${x.word} ${x.what}: ${x.id} in ${x.runs} of ${x.of} runs`),
      };
      if (values.markdown) printMarkdown(io, markdownLines([p.summary, markdown``]));
      else printOut(io, p.text);
      if (summaryFile) appendStepSummary(summaryFile, p.summary);
      if (p.exitCode !== 0) exit = 1;
      notes.push({ kind: p.exitCode !== 0 ? "error" : "notice", text: p.headline });
    }
  }
  // in a GitHub Actions step (the upgrade job's gate), the outcome is one annotation per path
  printAnnotations(
    io,
    notes.map((n) => annotation(n.kind, "upgrade", n.text)),
  );
  if (junit !== undefined) {
    writeOutput(junit, upgradeJUnit(cases), positionals, "--junit");
    printErr(io, terminal`wrote ${junit}\n`);
  }
  return exit;
}

/**
 * `upgrade BUNDLE`'s judgement (helpers/upgrade-gate.ts): the upgrade bundle, every topic after each leg, the
 * source's known issues; `run` gives its upgrade runs the same gate.
 */
export async function gateUpgrade(
  dir: string,
  opts: { freshTo?: string | undefined; freshFrom?: string | undefined; allowKnown?: boolean },
): Promise<import("../helpers/upgrade-gate.ts").GateResult> {
  const { gateBundles, gateOf } = await import("../helpers/upgrade-inputs.ts");
  const options = {
    freshTo: opts.freshTo ?? null,
    freshFrom: opts.freshFrom ?? null,
    allowKnown: opts.allowKnown === true,
  };
  const all = await topics();
  return readingBundles(gateBundles(dir, options), () => gateOf(dir, all, options));
}

export const summary: Command = {
  name: "summary",
  synopsis: "BUNDLE|DIR… [--svg FILE] [--markdown]",
  summary: "measurements as tables, and an SVG chart (rules vs Services, latencies)",
  options: {
    svg: { type: "string", value: "FILE", help: "also write the chart to FILE" },
    markdown: MARKDOWN,
  },
  run: async ({ positionals, values }, io) => {
    if (positionals.length === 0)
      throw new UserError("which bundle(s)? e.g. summary results/<run-id>/kpr results/<run-id>/kube-proxy");
    const { checkBundle } = await import("../helpers/check.ts");
    const { bundlesOf, readMeta } = await import("../helpers/bundle/read.ts");
    const { summaryMarkdown, summarySvg, summaryText } = await import("../helpers/measure/summary.ts");
    const { checkOutputPath, writeOutput } = await import("../helpers/write-output.ts");
    const all = await topics();
    const svg = stringOption(values, "svg");
    // every bundle named (a folder stands for those in it) is read first, and where the chart goes is checked:
    // a wrong path is one line before any work
    const dirs = bundlesOf(positionals);
    const metas = dirs.map((dir) => readMeta(dir));
    if (svg !== undefined) checkOutputPath(svg, dirs, "--svg");
    const measured: MeasuredBundle[] = [];
    for (const [i, dir] of dirs.entries()) {
      const meta = metas[i] as BundleMeta;
      const r = await readingBundles([dir], () => checkBundle(dir, all));
      measured.push({
        label: `${meta.mode} ${meta.cilium}`,
        meta,
        ...r.measurements,
      });
    }
    if (values.markdown) printMarkdown(io, summaryMarkdown(measured));
    else printOut(io, summaryText(measured));
    if (svg !== undefined) {
      writeOutput(svg, summarySvg(measured), dirs, "--svg");
      printErr(io, terminal`wrote ${svg}\n`);
    }
    return 0;
  },
};

export const report: Command = {
  name: "report",
  synopsis: "BUNDLE|DIR… [-o FILE] [--compare A B] [--no-nearest]",
  summary: "one self-contained HTML page: the headline, the runs, every property with its evidence, charts",
  details:
    "The page opens on the verdict: for an upgrade bundle, the answer `upgrade` gives (HELD, BROKEN, REGRESSED or INCONCLUSIVE, and what broke), and for every page how many verdicts failed (a change in a new minor among them) and how many are known issues, the failures named. A bundle of a Cilium version the suite ships no bundle of (a new patch, a minor it has not declared) follows it with what changed from the shipped bundle of the nearest declared version of its mode and profile (--no-nearest leaves it out). Then the upgrade view (whenever an upgrade bundle is given), the field documents' five claims in each mode's own words with a picture of where each mode translated the Service, every property side by side per bundle with its evidence and raw outputs (several bundles: what differs first, All a click away; columns grouped by version), the runs with their wall time, and the measurement charts. With --compare, what changed from A to B; without BUNDLE, A and B are the columns.",
  options: {
    output: { type: "string", short: "o", value: "FILE", help: "where to write the page (report.html)" },
    compare: { type: "pair", value: "A B", help: "add what changed from bundle A to bundle B" },
    "no-nearest": {
      type: "boolean",
      help: "leave out what changed from the nearest shipped bundle (shown after the verdict for a bundle of a version the suite ships none of)",
    },
  },
  run: async ({ positionals, values }, io) => {
    const pair = values.compare;
    const compare = Array.isArray(pair) ? pair : undefined;
    const { bundlesOf } = await import("../helpers/bundle/read.ts");
    const dirs = bundlesOf(positionals.length > 0 ? positionals : compare ? [...compare] : []);
    if (dirs.length === 0)
      throw new UserError(
        "which bundle(s)? e.g. report suites/bundles/1.20/kpr suites/bundles/1.20/kube-proxy -o report.html",
      );
    const { writeReport } = await import("../helpers/report/write.ts");
    const out = stringOption(values, "output") ?? "report.html";
    const all = await topics();
    const { bytes } = await readingBundles([...dirs, ...(compare ?? [])], () =>
      writeReport(dirs, all, out, {
        ...(compare ? { compare } : {}),
        ...(values["no-nearest"] ? { nearest: false } : {}),
      }),
    );
    printErr(io, terminal`wrote ${out} (${Math.round(bytes / 1024)} KiB)\n`);
    return 0;
  },
};

/** `plan` and `run` take the same options, from clusters/run-inputs.ts (each naming its environment variable). */
const RUN_OPTIONS: Record<string, OptionSpec> = Object.fromEntries(
  RUN_INPUTS.map((i) => [
    i.flag,
    {
      type: i.type,
      ...(i.value ? { value: i.value } : {}),
      help: `${i.help}${i.env ? `; env ${i.env}${i.type === "boolean" ? "=1" : ""}` : ""}`,
    },
  ]),
);

const RUN_SYNOPSIS =
  "[--provider kind|k3d|existing|replay] [--mode kpr|kube-proxy] [--cilium X.Y[.Z]] [--profile NAME] [--values FILE] [--upgrade-to X.Y[.Z] [--rollback]] [--test REGEX] [--skip REGEX] [--junit FILE] [--keep]";

/** The inputs of `plan` and `run`: their flags over the environment, through the one parser. */
async function runInputs(values: OptionValues, env: NodeJS.ProcessEnv) {
  const { parseRunInputs } = await import("../clusters/run-inputs.ts");
  return parseRunInputs(values, env);
}

export const plan: Command = {
  name: "plan",
  synopsis: RUN_SYNOPSIS,
  summary:
    "what a run would do: every command, the kind config / k3d arguments and the Helm values; runs nothing",
  details:
    "Takes exactly `run`'s inputs, flags over the environment variables each names (CILIUM_VERSION=1.19 plan plans 1.19), through the same parser: what plan refuses, run refuses with the same line. A version the suite has never run is said (never run here: …). Without --mode, kind and k3d plan both modes (a run's default) or the profile's; existing reads the mode and the Cilium version from the cluster's agents and replay from the bundle, so --mode only names the one the run must find there. With LAB_IMAGES=1 the plan uses the offline lab's images and chart (a minor maps to the lab's build of it).",
  options: RUN_OPTIONS,
  maxPositionals: 0,
  run: async ({ values }, io) => {
    const { formatPlan, makeProfile } = await import("../clusters/profile.ts");
    const { labEnabled, readLab } = await import("../clusters/lab.ts");
    const inputs = await runInputs(values, io.env);
    const { provider, mode } = inputs;
    const lab = labEnabled(io.env) ? readLab(io.env) : undefined;
    const profileOf = (m: Mode) =>
      makeProfile({
        provider,
        mode: m,
        ...(inputs.cilium !== undefined ? { cilium: inputs.cilium } : {}),
        ...(lab ? { lab } : {}),
        ...(inputs.profile ? { datapath: inputs.profile } : {}),
        ...(inputs.values ? { userValues: inputs.values } : {}),
      });
    const also = alsoText(inputs);
    if (provider === "existing" || provider === "replay") {
      const from = provider === "existing" ? "its agents report" : "the bundle recorded";
      printOut(
        io,
        ownLines(
          formatPlan(profileOf(mode ?? "kpr"), {
            mode: mode ? `${mode} (must be the mode ${from})` : `the mode ${from}`,
            cilium: `the Cilium version ${from}`,
          }) +
            also +
            (provider === "existing" ? await scheduleText(io.env) : ""),
        ),
      );
      return 0;
    }
    printOut(
      io,
      ownLines(
        inputs.modes.map((m) => formatPlan(profileOf(m))).join("\n") + also + (await scheduleText(io.env)),
      ),
    );
    return 0;
  },
};

/** What else the run is asked for, under its plan: the upgrade leg, the test filter, the JUnit report. */
function alsoText(i: import("../clusters/run-inputs.ts").RunInputs): string {
  const lines = [
    ...(i.upgradeTo
      ? [
          `# then: restart under load, upgrade to Cilium ${i.upgradeTo} under load (preflight, helm upgrade with the run's values, rollout), every topic again${i.rollback ? "; helm rollback under load, every topic again" : ""}`,
        ]
      : []),
    ...i.notes.filter((n) => n.startsWith("upgrade target: ")).map((n) => `# ${n}`),
    ...(i.test !== undefined ? [`# only the tests whose name matches /${i.test}/`] : []),
    ...(i.skip !== undefined ? [`# without the tests whose name matches /${i.skip}/`] : []),
    ...(i.junit ? [`# JUnit report: ${i.junit}`] : []),
    ...(i.keep ? ["# the clusters are kept (KEEP_CLUSTER=1): no teardown"] : []),
  ];
  return lines.length ? `\n## the run\n${lines.join("\n")}\n` : "";
}

export const run: Command = {
  name: "run",
  synopsis: `${RUN_SYNOPSIS} [--dry-run]`,
  summary:
    "the main job: provision, install Cilium, run every topic, judge the bundles; ends on a summary naming each failure and known issue",
  details: [
    "Runs what `npm run test:conformance` runs (vitest, the conformance project) with the environment its flags give, then judges every bundle the run wrote as `check` does (an upgrade run: as `upgrade` does too), and ends on a summary: each bundle's counts, each failure and known issue with its first raw line, where the bundles are and the report command. Progress by phase on stderr ([run 1/2] conformance, [run 2/2] check; [run 3/3] upgrade with --upgrade-to), the conformance project's own lines between them. Exit 0 when every property held (known issues are listed, not failures, as in check), 1 when one failed, the conformance project's code when it could not run, 130 on Ctrl-C (after the teardown). `plan` takes the same inputs and prints what this would do.",
    "",
    "environment: each flag's variable above is read when the flag is not given (a flag wins). And:",
    ...OTHER_RUN_VARIABLES.map(([k, v]) => `  ${k}: ${v}`),
  ].join("\n"),
  options: {
    ...RUN_OPTIONS,
    "dry-run": { type: "boolean", help: "print the phases and the command; run nothing" },
  },
  maxPositionals: 0,
  run: async ({ values }, io) => {
    const inputs = await runInputs(values, io.env);
    const { run: runJob, realRunDeps } = await import("./run.ts");
    return runJob(
      { inputs, dryRun: values["dry-run"] === true },
      await realRunDeps({
        env: io.env,
        log: (line) => printErr(io, ownLines(`${line}\n`)),
        say: (text) => printOut(io, text),
      }),
    );
  },
};

/** The topics' schedule, under a cluster run's plan (suites/schedule.ts). */
async function scheduleText(env: NodeJS.ProcessEnv): Promise<string> {
  const { formatSchedule } = await import("../suites/schedule.ts");
  const { TOPICS } = await import("../suites/topics.ts");
  const { conformanceWorkers } = await import("../suites/run-state.ts");
  return `\n${formatSchedule(TOPICS, conformanceWorkers(env.CONFORMANCE_WORKERS))}\n`;
}

/** `lab images|up|down|status`: clusters/lab/lab.sh does the work (root, Linux). */
function labScript(name: string, synopsis: string, summaryText: string, maxPositionals?: number): Command {
  return {
    name,
    synopsis,
    summary: summaryText,
    ...(maxPositionals !== undefined ? { maxPositionals } : {}),
    run: async ({ positionals }, io) => {
      if (process.platform !== "linux") throw new UserError("the offline lab builds on Linux only");
      const { LAB_SCRIPT } = await import("../clusters/lab.ts");
      const { execa } = await import("execa");
      const r = await execa("bash", [LAB_SCRIPT, name, ...positionals], { stdio: "inherit", reject: false });
      if (r.exitCode !== 0) printErr(io, terminal`datapath-conformance lab ${name}: exited ${r.exitCode}\n`);
      return r.exitCode ?? 1;
    },
  };
}

export const lab: Command = {
  name: "lab",
  synopsis: "run | images [STEP…] | up | down | status",
  summary:
    "the offline lab: build kind/Kubernetes/Cilium images from Go modules and Debian packages, and run on them (root, Linux)",
  subcommands: [
    {
      name: "run",
      synopsis: "[--mode kpr|kube-proxy] [--cilium X.Y[.Z]] [--profile NAME] [--values FILE] [--dry-run]",
      summary:
        "the whole job: build what is missing, start the engine, run both modes, write the HTML report and print where it is",
      details:
        "Phases: images (clusters/lab/lab.sh images: finished steps are skipped; a Cilium version versions.env does not name is built too, and what the module proxy refuses of it is said in one line per module file; a cold build is estimated from $LAB_CACHE/timings.tsv or the measured figures in docs/lab.md), engine (lab up), conformance (LAB_IMAGES=1 CLUSTER_PROVIDER=kind, the conformance project), report (results/<run-id>/report.html). Exit 0 when every property held.",
      options: {
        mode: { type: "string", value: "kpr|kube-proxy", help: "one mode only (both by default)" },
        cilium: {
          type: "string",
          value: "X.Y[.Z]",
          help: "the Cilium version the lab builds and runs: a minor (its build in clusters/lab/versions.env, the newest by default) or any patch (1.19.8, 1.21.0: built if missing; what the module proxy refuses is said in one line)",
        },
        profile: {
          type: "string",
          value: "NAME",
          help: "a datapath profile beside the mode (clusters/datapath-profiles.ts; its modes unless --mode)",
        },
        values: { type: "string", value: "FILE", help: "your Helm values, merged under what the suite sets" },
        "dry-run": { type: "boolean", help: "print the phases and the estimate; run nothing" },
      },
      maxPositionals: 0,
      run: async ({ values }, io) => {
        const { labRun, realLabRunDeps } = await import("./lab-run.ts");
        return labRun(
          {
            mode: stringOption(values, "mode"),
            cilium: stringOption(values, "cilium"),
            profile: stringOption(values, "profile"),
            values: stringOption(values, "values"),
            dryRun: values["dry-run"] === true,
          },
          await realLabRunDeps(io),
        );
      },
    },
    labScript(
      "images",
      "[STEP…]",
      "build the images (idempotent: a finished step is skipped; progress and timings); STEP… builds only those",
    ),
    labScript("up", "", "start the lab's container engine if none runs (prints how to stop it)", 0),
    labScript("down", "", "delete the lab's kind clusters and stop the engine it started", 0),
    labScript(
      "status",
      "",
      "what is built (each Cilium version: built, or not and what the module proxy refused), what runs, the cache's size",
      0,
    ),
  ],
};

export const ALL_COMMANDS: Command[] = [
  parse,
  formats,
  expectations,
  check,
  compare,
  declareMinor,
  upgrade,
  summary,
  report,
  plan,
  run,
  lab,
];

/** gzip's magic bytes: the bundles keep their large outputs as `raw/<topic>/NNN-….txt.gz`. */
const isGzip = (head: Uint8Array) => head[0] === 0x1f && head[1] === 0x8b;

/** FILE's text, gunzipped when it is gzip (whatever its name). */
function readText(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new UserError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!isGzip(bytes)) return bytes.toString("utf8");
  try {
    return gunzipSync(bytes).toString("utf8");
  } catch (err) {
    throw new UserError(`cannot read ${file}: not valid gzip (${(err as Error).message})`);
  }
}

/** FILE as a stream of chunks, gunzipped on the way when it is gzip. */
function readStream(file: string): AsyncIterable<Buffer | string> {
  const head = Buffer.alloc(2);
  try {
    const fd = openSync(file, "r");
    try {
      readSync(fd, head, 0, 2, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw new UserError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const raw = createReadStream(file, { highWaterMark: 1 << 20 });
  if (!isGzip(head)) return raw;
  const gunzip = createGunzip({ chunkSize: 1 << 20 });
  raw.on("error", (err) => gunzip.destroy(err));
  // a broken archive is one line, like any unreadable input
  return (async function* () {
    try {
      yield* raw.pipe(gunzip) as AsyncIterable<Buffer>;
    } catch (err) {
      throw new UserError(`cannot read ${file}: not valid gzip (${(err as Error).message})`);
    }
  })();
}

/**
 * Runs what reads bundles; an error no check foresaw (a bug, or a bundle shaped in a way nothing anticipated)
 * is one line naming the bundles, never a stack trace (DATAPATH_CONFORMANCE_DEBUG=1 prints it).
 */
export async function readingBundles<T>(dirs: string[], run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UserError || (err as NodeJS.ErrnoException).code === "EPIPE") throw err;
    if (process.env.DATAPATH_CONFORMANCE_DEBUG === "1") printDebugStack(err);
    const e = err instanceof Error ? err : new Error(String(err));
    throw new UserError(
      `could not read ${dirs.join(", ")}: unexpected ${e.name}: ${(e.message.split("\n")[0] ?? "").slice(0, 200)} (DATAPATH_CONFORMANCE_DEBUG=1 prints the stack; please report it)`,
    );
  }
}
