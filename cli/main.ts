import { createReadStream, readFileSync, statSync, writeFileSync } from "node:fs";
import { LAB_SCRIPT, labEnabled, readLab } from "../clusters/lab.ts";
import { formatPlan, makeProfile, parseMode, parseProvider } from "../clusters/profile.ts";
import { readMeta } from "../helpers/bundle.ts";
import { checkBundle, formatCheck, formatCheckMarkdown } from "../helpers/check.ts";
import { compareBundles, formatComparison } from "../helpers/compare.ts";
import { UserError } from "../helpers/errors.ts";
import { type MeasuredBundle, summaryMarkdown, summarySvg } from "../helpers/measure/summary.ts";
import { FORMAT_NAMES, FORMATS } from "../helpers/parse/index.ts";
import { formatNotes, withNotes } from "../helpers/parse/lines.ts";
import { forEachBlock, RowBuffer, STREAMING } from "../helpers/parse/stream.ts";
import { stripTranscript } from "../helpers/parse/transcript.ts";
import { MODES } from "../helpers/properties/expectation.ts";
import { expectationMarkdown, expectationRows } from "../helpers/properties/table.ts";
import { buildReport, renderReport } from "../helpers/report/html.ts";
import { PROPERTIES, TOPICS } from "../suites/topics.ts";
import { oneOf, parseArgs } from "./args.ts";
import { COMMANDS, registerCommand, usage } from "./registry.ts";

registerCommand({
  name: "parse",
  summary:
    "parse FORMAT [FILE|-] [--transcript] [--ndjson]  raw command output → JSON on stdout (--ndjson: one record a line, streamed)",
  run: async (argv, io) => {
    const { positional, flags } = parseArgs(argv, ["transcript", "ndjson"]);
    const [format, file = "-"] = positional;
    if (!format) throw new UserError(`parse: which format? valid: ${FORMAT_NAMES.join(", ")}`);
    const spec = FORMATS[format];
    if (!spec)
      throw new UserError(`unknown format ${JSON.stringify(format)}; valid: ${FORMAT_NAMES.join(", ")}`);
    if (flags.ndjson) {
      const stream = STREAMING[format];
      if (!stream)
        throw new UserError(
          `--ndjson streams the line-per-record formats (${Object.keys(STREAMING).join(", ")}); ${format} prints one JSON document`,
        );
      if (flags.transcript)
        throw new UserError("--ndjson reads raw output; strip a transcript first (parse without --ndjson)");
      const rows = new RowBuffer();
      let source: AsyncIterable<Buffer | string>;
      try {
        if (file !== "-") statSync(file);
        source = file === "-" ? io.stdin() : createReadStream(file, { highWaterMark: 1 << 20 });
      } catch (err) {
        throw new UserError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      const flush = async () => {
        const bytes = rows.take();
        if (bytes) await io.write(bytes);
      };
      await forEachBlock(source, async (block, offset) => {
        let read: number;
        try {
          read = stream(block, offset, (json) => rows.add(json));
        } catch (err) {
          // the records before a bad line are written first, then the line is named
          await flush();
          throw err;
        }
        await flush();
        return read;
      });
      return 0;
    }
    let input = file === "-" ? await io.readStdin() : readText(file);
    if (flags.transcript) input = stripTranscript(input);
    // what the parser passed over without failing (elided lines, unknown fields kept in `extra`) goes to stderr
    const { value, notes } = withNotes(() => spec.parse(input));
    io.out(`${JSON.stringify(value, null, 2)}\n`);
    const said = formatNotes(format, notes);
    if (said) io.err(said);
    return 0;
  },
});

registerCommand({
  name: "formats",
  summary: "formats  list the output formats `parse` reads",
  run: async (_argv, io) => {
    for (const name of FORMAT_NAMES) io.out(`${name.padEnd(20)} ${FORMATS[name]?.command}\n`);
    return 0;
  },
});

registerCommand({
  name: "expectations",
  summary:
    "expectations [--mode kpr|kube-proxy] [--cilium X.Y[.Z]] [--format md|json]  the expectation table",
  run: async (argv, io) => {
    const { flags } = parseArgs(argv);
    const mode = oneOf("mode", flags.mode, MODES);
    const format = oneOf("format", flags.format, ["md", "json"] as const) ?? "md";
    const cilium = flags.cilium === undefined ? undefined : checkMinor(flags.cilium);
    if (format === "json")
      io.out(`${JSON.stringify(expectationRows(PROPERTIES, { mode, cilium }), null, 2)}\n`);
    else io.out(expectationMarkdown(PROPERTIES, { mode, cilium }));
    return 0;
  },
});

registerCommand({
  name: "check",
  summary: "check BUNDLE… [--markdown]  re-judge evidence bundles offline; exit 1 when a property fails",
  run: async (argv, io) => {
    const { positional, flags } = parseArgs(argv, ["markdown"]);
    if (positional.length === 0) throw new UserError("check: which bundle? e.g. suites/bundles/kpr");
    let failed = false;
    for (const dir of positional) {
      const r = await checkBundle(dir, TOPICS);
      io.out(flags.markdown ? formatCheckMarkdown(r) : formatCheck(r));
      if (r.verdicts.some((v) => v.status === "fail")) failed = true;
    }
    return failed ? 1 : 0;
  },
});

registerCommand({
  name: "compare",
  summary:
    "compare BUNDLE_A BUNDLE_B  property-by-property comparison (markdown); exit 1 when a verdict changed or a property disappeared",
  run: async (argv, io) => {
    const { positional } = parseArgs(argv);
    const [a, b] = positional;
    if (!a || !b || positional.length !== 2)
      throw new UserError("compare needs two bundles: compare BUNDLE_A BUNDLE_B");
    const c = await compareBundles(a, b, TOPICS);
    io.out(formatComparison(c));
    return c.regressed ? 1 : 0;
  },
});

registerCommand({
  name: "summary",
  summary:
    "summary BUNDLE… [--svg FILE]  measurements as a markdown table, and an SVG chart (rules vs Services, latencies)",
  run: async (argv, io) => {
    const { positional, flags } = parseArgs(argv);
    if (positional.length === 0)
      throw new UserError(
        "summary: which bundle(s)? e.g. summary results/<run-id>/kpr results/<run-id>/kube-proxy",
      );
    const measured: MeasuredBundle[] = [];
    for (const dir of positional) {
      const r = await checkBundle(dir, TOPICS);
      const meta = readMeta(dir);
      measured.push({
        label: `${meta.mode} ${meta.cilium}`,
        meta,
        ...(r.records.scaling ? { scaling: r.records.scaling.record } : {}),
        ...(r.records.latency ? { latency: r.records.latency.record } : {}),
      });
    }
    io.out(summaryMarkdown(measured));
    if (typeof flags.svg === "string") {
      writeFileSync(flags.svg, summarySvg(measured));
      io.err(`wrote ${flags.svg}\n`);
    }
    return 0;
  },
});

registerCommand({
  name: "report",
  summary:
    "report BUNDLE… [-o FILE] [--compare A B]  one self-contained HTML page: the runs, every property side by side per mode with its evidence, the measurement charts, and (with --compare) what changed from A to B",
  run: async (argv, io) => {
    // --compare takes two bundles
    const rest = [...argv];
    let compare: [string, string] | undefined;
    const at = rest.indexOf("--compare");
    if (at >= 0) {
      const [a, b] = rest.slice(at + 1, at + 3);
      if (!a || !b || a.startsWith("-") || b.startsWith("-"))
        throw new UserError(
          "report: --compare needs two bundles, e.g. --compare results/r1/kpr results/r2/kpr",
        );
      compare = [a, b];
      rest.splice(at, 3);
    }
    const { positional, flags } = parseArgs(rest);
    const dirs = positional.length > 0 ? positional : compare ? [...compare] : [];
    if (dirs.length === 0)
      throw new UserError(
        "report: which bundle(s)? e.g. report suites/bundles/kpr suites/bundles/kube-proxy -o report.html",
      );
    for (const d of [...dirs, ...(compare ?? [])]) readMeta(d);
    const out =
      typeof flags.o === "string" ? flags.o : typeof flags.output === "string" ? flags.output : "report.html";
    const html = renderReport(await buildReport(dirs, TOPICS, compare ? { compare } : {}));
    writeFileSync(out, html);
    io.err(`wrote ${out} (${Math.round(html.length / 1024)} KiB)\n`);
    return 0;
  },
});

registerCommand({
  name: "plan",
  summary:
    "plan --provider kind|k3d|existing|replay --mode kpr|kube-proxy [--cilium X.Y[.Z]]  what a run would do; runs nothing",
  run: async (argv, io) => {
    const { flags } = parseArgs(argv);
    const provider = parseProvider(flags.provider === true ? "" : flags.provider);
    const mode = parseMode(flags.mode === true ? "" : flags.mode);
    const cilium = flags.cilium === true ? "" : flags.cilium;
    const lab = labEnabled() ? readLab() : undefined;
    io.out(
      formatPlan(
        makeProfile({ provider, mode, ...(cilium !== undefined ? { cilium } : {}), ...(lab ? { lab } : {}) }),
      ),
    );
    return 0;
  },
});

registerCommand({
  name: "lab",
  summary:
    "lab images [STEP…] | up | down | status  the offline lab: build kind/Kubernetes/Cilium images from Go modules and Debian packages (root, Linux)",
  run: async (argv, io) => {
    const [sub] = argv;
    if (!sub || !["images", "up", "down", "status"].includes(sub))
      throw new UserError("lab: which step? valid: images [STEP…], up, down, status");
    if (process.platform !== "linux") throw new UserError("lab: the offline lab builds on Linux only");
    const { execa } = await import("execa");
    const r = await execa("bash", [LAB_SCRIPT, ...argv], { stdio: "inherit", reject: false });
    if (r.exitCode !== 0) io.err(`datapath-conformance lab ${sub}: exited ${r.exitCode}\n`);
    return r.exitCode ?? 1;
  },
});

function checkMinor(v: string | true): string {
  if (v === true || !/^1\.\d+(\.\d+)?$/.test(v))
    throw new UserError(
      `--cilium takes a minor such as 1.20 or a version such as 1.19.3, got ${JSON.stringify(v === true ? "" : v)}`,
    );
  return v;
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UserError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

export interface Io {
  out(s: string): void;
  err(s: string): void;
  readStdin(): Promise<string>;
  /** Streamed output: resolves when the sink has taken it (backpressure). Defaults to `out`. */
  write?(s: string | Uint8Array): Promise<void>;
  /** Standard input as a stream of chunks (`parse --ndjson -`). */
  stdin?(): AsyncIterable<Buffer | string>;
}

/** An Io with the streamed parts filled in from the plain ones (tests pass only out/err/readStdin). */
function withStreams(io: Io): Required<Io> {
  return {
    ...io,
    write: io.write ?? (async (s) => io.out(typeof s === "string" ? s : Buffer.from(s).toString("utf8"))),
    stdin:
      io.stdin ??
      async function* () {
        yield await io.readStdin();
      },
  };
}

const processIo: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
  write: (s) =>
    new Promise<void>((resolve, reject) => {
      if (process.stdout.write(s)) return resolve();
      const done = (err?: Error) => {
        process.stdout.off("drain", done).off("error", done);
        if (err) reject(err);
        else resolve();
      };
      process.stdout.once("drain", done).once("error", done);
    }),
  stdin: () => process.stdin,
};

/** Runs one CLI invocation; user errors print one line and return their exit code (2 by default). */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    io.out(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS.get(name);
  try {
    if (!cmd)
      throw new UserError(
        `unknown command ${JSON.stringify(name)}; valid: ${[...COMMANDS.keys()].join(", ")}`,
      );
    return await cmd.run(rest, withStreams(io));
  } catch (err) {
    // the reader closed the pipe (`… | head`): the output ends there
    if ((err as NodeJS.ErrnoException).code === "EPIPE") return 0;
    if (err instanceof UserError) {
      io.err(`datapath-conformance ${name}: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}
