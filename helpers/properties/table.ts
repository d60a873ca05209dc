import { describeExpect, describeModeExpectation, MODES, type Mode, resolve } from "./expectation.ts";
import { sourceText } from "./judge.ts";
import type { Property } from "./types.ts";

export interface TableOptions {
  mode?: Mode;
  /** Resolve per-minor expectations for this Cilium minor (e.g. "1.19"). */
  cilium?: string;
}

export interface TableRow {
  id: string;
  topic: string;
  claim: string;
  source: string;
  why: string | null;
  expected: Partial<Record<Mode, string>>;
}

export function expectationRows(props: Property[], opts: TableOptions = {}): TableRow[] {
  const modes = opts.mode ? [opts.mode] : [...MODES];
  return props.map((p) => ({
    id: p.id,
    topic: p.topic,
    claim: p.claim,
    source: sourceText(p),
    why: p.why ?? null,
    expected: Object.fromEntries(
      modes.map((m) => [
        m,
        opts.cilium
          ? describeExpect(resolve(p.expect[m], opts.cilium))
          : describeModeExpectation(p.expect[m]),
      ]),
    ),
  }));
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The expectation table as markdown: one row per property, one column per mode. */
export function expectationMarkdown(props: Property[], opts: TableOptions = {}): string {
  const modes = opts.mode ? [opts.mode] : [...MODES];
  const head = `| property | claim | ${modes.map((m) => `\`${m}\``).join(" | ")} | source |`;
  const sep = `|---|---|${modes.map(() => "---|").join("")}---|`;
  const rows = expectationRows(props, opts).map(
    (r) =>
      `| \`${r.id}\` | ${cell(r.claim)} | ${modes.map((m) => cell(r.expected[m] ?? "")).join(" | ")} | ${cell(r.source)}${r.why ? `; ${cell(r.why)}` : ""} |`,
  );
  const title = opts.cilium
    ? `Expectations for Cilium ${opts.cilium}`
    : "Expectations (per-minor differences in parentheses)";
  return [`_${title}._`, "", head, sep, ...rows, ""].join("\n");
}
