import { type ConfigDependence, dependsOn } from "./config.ts";
import { describeExpect, describeModeExpectation, MODES, type Mode, resolve } from "./expectation.ts";
import { twinOf } from "./family.ts";
import { sourceText } from "./judge.ts";
import type { FamilyDeclaration, Property } from "./types.ts";
import { assumedText, expectationBasis } from "./versions.ts";

export interface TableOptions {
  mode?: Mode;
  /** Resolve per-minor expectations for this Cilium minor (e.g. "1.19"). */
  cilium?: string;
  /** false: the table alone, without its italic title line (a page that renders one table per topic says it once). */
  title?: boolean;
  /** The properties to find an IPv4 property's IPv6 twin among (default: those tabled; a topic's table needs all). */
  among?: readonly Property[];
}

export interface TableRow {
  id: string;
  topic: string;
  claim: string;
  source: string;
  why: string | null;
  expected: Partial<Record<Mode, string>>;
  /** What the expectation depends on in the datapath configuration: "none", or the settings and cases. */
  configuration: string;
  /** Its IP-family pair: an IPv6 property's declaration (its IPv4 twin or why none), an IPv4 one's IPv6 twin. */
  family: FamilyDeclaration | { ip: "ipv4"; twin: string } | null;
}

/** An IPv6 property's pair in words, for the table's source cell: how it departs from its twin, or why it has none. */
function familyNote(f: TableRow["family"]): string | null {
  if (!f || f.ip === "ipv4") return null;
  if ("alone" in f) return `no IPv4 twin: ${f.alone}`;
  const modes = Object.entries(f.differs ?? {});
  if (modes.length === 0) return null;
  const why = [...new Set(modes.map(([, w]) => w))];
  return why.length === 1
    ? `parts from the IPv4 twin in ${modes.map(([m]) => m).join(" and ")}: ${why[0]}`
    : `parts from the IPv4 twin: ${modes.map(([m, w]) => `${m}: ${w}`).join("; ")}`;
}

/** The pair beside the property's id: "(IPv6 twin of `lb.from-node`)", "(IPv4; IPv6 twin `…`)", "(IPv6 only)". */
function familyTag(f: TableRow["family"], code: (id: string) => string): string {
  if (!f) return "";
  if (f.ip === "ipv4") return ` (IPv6 twin: ${code(f.twin)})`;
  return "of" in f ? ` (IPv6 twin of ${code(f.of)})` : " (IPv6 only)";
}

/** "none", or "assumes routing tunnel; socketLB hostns-only: <claim>" — the dependence in a few words. */
export function describeConfig(p: Property): string {
  if (p.config === "none") return "none";
  const dep: ConfigDependence = p.config;
  const shown = (m: Partial<Record<string, readonly string[]>> | undefined) =>
    Object.entries(m ?? {})
      .map(([k, vs]) => `${k} ${(vs as string[]).join("/")}`)
      .join(", ");
  const perMode = MODES.map((m) => [m, shown(dep.assumes[m])] as const).filter(([, t]) => t !== "");
  const same = perMode.length === MODES.length && perMode.every(([, t]) => t === perMode[0]?.[1]);
  const parts = same ? [perMode[0]?.[1] ?? ""] : perMode.map(([m, t]) => `${m}: ${t}`);
  const cases = (dep.cases ?? []).map(
    (c) =>
      `with ${Object.entries(c.when)
        .map(([k, vs]) => `${k} ${(vs as string[]).join("/")}`)
        .join(", ")}: ${Object.entries(c.expect)
        .map(([m, e]) => `${m} ${describeModeExpectation(e)}`)
        .join(", ")}`,
  );
  const keys = dependsOn(p.config).join(", ");
  return [parts.length ? `assumes ${parts.join("; ")}` : "", ...cases].filter(Boolean).join("; ") || keys;
}

export function expectationRows(props: Property[], opts: TableOptions = {}): TableRow[] {
  const modes = opts.mode ? [opts.mode] : [...MODES];
  // a minor newer than every declared one: the newest declared minor's expectations, as the judge assumes them
  const basis = expectationBasis(opts.cilium);
  const ipv6 = new Map<string, string>();
  for (const p of opts.among ?? props) {
    const of = twinOf(p);
    if (of) ipv6.set(of, p.id);
  }
  return props.map((p) => ({
    id: p.id,
    topic: p.topic,
    claim: p.claim,
    source: sourceText(p),
    why: p.why ?? null,
    configuration: describeConfig(p),
    family: p.family ?? (ipv6.has(p.id) ? { ip: "ipv4" as const, twin: ipv6.get(p.id) ?? "" } : null),
    expected: Object.fromEntries(
      modes.map((m) => [
        m,
        opts.cilium
          ? describeExpect(resolve(p.expect[m], basis.resolveAs))
          : describeModeExpectation(p.expect[m]),
      ]),
    ),
  }));
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The expectation table as markdown: one row per property, one column per mode. */
export function expectationMarkdown(props: Property[], opts: TableOptions = {}): string {
  const modes = opts.mode ? [opts.mode] : [...MODES];
  const head = `| property | claim | ${modes.map((m) => `\`${m}\``).join(" | ")} | configuration | source |`;
  const sep = `|---|---|${modes.map(() => "---|").join("")}---|---|`;
  const rows = expectationRows(props, opts).map((r) => {
    const note = familyNote(r.family);
    return `| \`${r.id}\`${familyTag(r.family, (id) => `\`${id}\``)} | ${cell(r.claim)} | ${modes.map((m) => cell(r.expected[m] ?? "")).join(" | ")} | ${cell(r.configuration)} | ${cell(r.source)}${r.why ? `; ${cell(r.why)}` : ""}${note ? `; ${cell(note)}` : ""} |`;
  });
  const title = tableTitle(opts);
  return [...(opts.title === false ? [] : [`_${title}._`, ""]), head, sep, ...rows, ""].join("\n");
}

function tableTitle(opts: TableOptions): string {
  const assumed = expectationBasis(opts.cilium).assumedFrom;
  return opts.cilium
    ? `Expectations for Cilium ${opts.cilium}${assumed ? `, ${assumedText(assumed)} (a minor the suite has not declared)` : ""}`
    : "Expectations (per-minor differences in parentheses)";
}

/**
 * The same as plain text, for a terminal (`expectations`' default): a few lines per property, values as they are
 * (no markdown escape such as `\|`).
 */
export function expectationText(props: Property[], opts: TableOptions = {}): string {
  const modes = opts.mode ? [opts.mode] : [...MODES];
  const blocks = expectationRows(props, opts).map((r) =>
    [
      `${r.id}${familyTag(r.family, (id) => id)}: ${r.claim}`,
      ...modes.map((m) => `  ${m}: ${r.expected[m] ?? ""}`),
      `  configuration: ${r.configuration}`,
      `  source: ${r.source}${r.why ? `; ${r.why}` : ""}`,
      ...(familyNote(r.family) ? [`  family: ${familyNote(r.family)}`] : []),
    ].join("\n"),
  );
  return `${tableTitle(opts)}.\n\n${blocks.join("\n\n")}\n`;
}
