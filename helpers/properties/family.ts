/**
 * The IP-family dimension (issue 43, as cilium-cli runs one scenario per address family): a property of an IPv6
 * topic names the IPv4 property it asks again of the IPv6 family, its twin, or says why it has none. The pair is
 * data: the source of a property declared with `ipv6Twin` names its twin, the expectation tables show the pair,
 * and suites/family.test.ts holds each pair's expectations to each other, mode by mode, unless the difference is
 * declared with its reason (`differs`).
 */
import {
  describeModeExpectation,
  type Expect,
  MODES,
  type Mode,
  type ModeExpectation,
} from "./expectation.ts";
import type { FamilyDeclaration, Property, Source } from "./types.ts";

/** The IPv6 member of `of`'s pair; `differs`: the modes whose expectation departs from the twin's, and why. */
export const ipv6Of = (of: string, differs?: Partial<Record<Mode, string>>): FamilyDeclaration => ({
  ip: "ipv6",
  of,
  ...(differs ? { differs } : {}),
});

/** An IPv6 property with no IPv4 twin, and why. */
export const ipv6Only = (why: string): FamilyDeclaration => ({ ip: "ipv6", alone: why });

/**
 * A property whose source is its IPv4 twin's, asked of an IPv6 Service: its `family` and its `source`, which names
 * the twin, to spread into the declaration; `also`, what the IPv6 path adds to the twin's sources (the lb6 code).
 */
export function ipv6Twin(
  of: string,
  also: string,
  differs?: Partial<Record<Mode, string>>,
): { family: FamilyDeclaration; source: Source } {
  return {
    family: ipv6Of(of, differs),
    source: {
      doc: "upstream",
      where: `the IPv4 twin ${of} (its sources), asked of a single-stack IPv6 Service; ${also}`,
    },
  };
}

/** The IPv4 twin a property names, or null (IPv4, or an IPv6 property with none). */
export function twinOf(p: Pick<Property, "family">): string | null {
  return p.family && "of" in p.family ? p.family.of : null;
}

/** `each` is the same bound over a list of probes as over one: a pair may observe one probe or several. */
const single = (e: Expect): Expect => ("each" in e ? e.each : e);

function normalised(e: ModeExpectation): ModeExpectation {
  if (!("default" in e)) return single(e);
  return {
    ...e,
    default: single(e.default),
    ...(e.byMinor
      ? {
          byMinor: Object.fromEntries(
            Object.entries(e.byMinor).map(([m, d]) => [m, { ...d, expect: single(d.expect) }]),
          ),
        }
      : {}),
    ...(e.byPatch ? { byPatch: e.byPatch.map((r) => ({ ...r, expect: single(r.expect) })) } : {}),
  };
}

/**
 * What a property expects in one mode, as the pair compares it: the expectation per version (the versions that
 * deviate, and whether as a known issue) and each configuration case's, by its settings other than the IP family
 * (the twins' families differ by definition). Claims and reasons are each member's own: only values are compared.
 */
export function familyExpectation(p: Property, mode: Mode): string {
  const cases =
    p.config === "none"
      ? []
      : (p.config.cases ?? []).flatMap((c) => {
          const e = c.expect[mode];
          if (!e) return [];
          const when = Object.entries(c.when)
            .filter(([k]) => k !== "ipFamilies")
            .map(([k, vs]) => `${k} ${(vs as readonly string[]).join("/")}`)
            .join(", ");
          return [`with ${when}: ${describeModeExpectation(normalised(e))}`];
        });
  return [describeModeExpectation(normalised(p.expect[mode])), ...cases.sort()].join("; ");
}

/**
 * What is wrong with the family pairs of a set of properties, one line each (empty: nothing): a twin that does not
 * exist or is itself an IPv6 property, an IPv4 property claimed twice, a property of an IPv6 topic that declares no
 * family, and a mode where the pair's expectations differ without a declared reason (or a reason declared where
 * they agree).
 */
export function familyProblems(props: readonly Property[], ipv6Topics: ReadonlySet<string>): string[] {
  const byId = new Map(props.map((p) => [p.id, p]));
  const claimed = new Map<string, string>();
  const out: string[] = [];
  for (const p of props) {
    if (!p.family) {
      if (ipv6Topics.has(p.topic))
        out.push(`${p.id}: a property of an IPv6 topic declares neither its IPv4 twin nor why it has none`);
      continue;
    }
    if (!ipv6Topics.has(p.topic))
      out.push(`${p.id}: declares an IP family, but its topic is not an IPv6 one`);
    if (!("of" in p.family)) continue;
    const { of, differs = {} } = p.family;
    const twin = byId.get(of);
    if (!twin) {
      out.push(`${p.id}: its IPv4 twin ${of} is no property`);
      continue;
    }
    if (ipv6Topics.has(twin.topic)) out.push(`${p.id}: its twin ${of} is itself an IPv6 property`);
    const other = claimed.get(of);
    if (other) out.push(`${p.id}: ${of} is already the IPv4 twin of ${other}`);
    claimed.set(of, p.id);
    for (const mode of MODES) {
      const mine = familyExpectation(p, mode);
      const theirs = familyExpectation(twin, mode);
      const why = differs[mode];
      if (mine !== theirs && !why)
        out.push(
          `${p.id} (${mode}): expects ${mine}, its IPv4 twin ${of} ${theirs}: declare why in family.differs, or align them`,
        );
      if (mine === theirs && why)
        out.push(`${p.id} (${mode}): declares a difference from ${of} (${why}), but both expect ${mine}`);
    }
  }
  return out;
}
