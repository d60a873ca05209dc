import { join } from "node:path";
import { legBundles, readMeta, shippedBundle } from "./bundle/read.ts";
import { type CheckResult, checkBundle } from "./check.ts";
import { UserError } from "./errors.ts";
import { resolveVersion } from "./properties/expectation.ts";
import type { TopicDeclaration } from "./topic.ts";
import { againstFresh, type GateResult, judgeUpgrade } from "./upgrade-gate.ts";

/** The shipped bundles (a fresh install of a minor is `<minor>/<mode>` there). */
export const SHIPPED_DIR = join(import.meta.dirname, "..", "suites", "bundles");

/**
 * The shipped fresh bundle of a minor and mode, or null: `shippedBundle` (a minor is `X.Y`, no link followed,
 * confined to suites/bundles/), so a bundle's fields never name another folder.
 */
export function shippedFresh(minor: unknown, mode: unknown): string | null {
  if (typeof minor !== "string" || (mode !== "kpr" && mode !== "kube-proxy")) return null;
  return shippedBundle(minor, mode);
}

export interface GateOptions {
  freshFrom?: string | null;
  freshTo?: string | null;
  allowKnown?: boolean;
  /** How a bundle is judged (the check cache's in the report); checkBundle by default. */
  judge?: (dir: string) => Promise<CheckResult>;
}

/** The path an upgrade bundle took, as its bundle.json says: runs with the same key answer together. */
export function pathKey(dir: string): string {
  const m = readMeta(dir);
  if (!m.upgrade)
    throw new UserError(
      `${dir} is not an upgrade bundle (its bundle.json has no upgrade: a run with UPGRADE_TO)`,
    );
  return `${m.upgrade.fromMinor} → ${m.upgrade.toMinor}${m.upgrade.rollback ? " and back" : ""}, ${m.mode}`;
}

/** Every bundle the gate of `dir` reads (for readingBundles' messages). */
export function gateBundles(dir: string, o: GateOptions = {}): string[] {
  const m = readMeta(dir);
  const to = o.freshTo ?? shippedFresh(m.upgrade?.toMinor, m.mode);
  const from = o.freshFrom ?? shippedFresh(m.upgrade?.fromMinor, m.mode);
  return [dir, ...legBundles(dir), ...(to ? [to] : []), ...(from ? [from] : [])];
}

/** One upgrade bundle's gate, as every reader gives it. */
export async function gateOf(
  dir: string,
  topics: TopicDeclaration[],
  o: GateOptions = {},
): Promise<GateResult> {
  const judge = o.judge ?? ((d: string) => checkBundle(d, topics));
  const meta = readMeta(dir);
  if (!meta.upgrade)
    throw new UserError(
      `${dir} is not an upgrade bundle (its bundle.json has no upgrade: a run with UPGRADE_TO)`,
    );
  const freshTo = o.freshTo ?? shippedFresh(meta.upgrade.toMinor, meta.mode);
  const freshFrom = o.freshFrom ?? shippedFresh(meta.upgrade.fromMinor, meta.mode);
  const up = await judge(dir);
  const legs = [];
  for (const n of legBundles(dir)) {
    const leg = n.endsWith("after-rollback") ? "rollback" : "upgrade";
    const result = await judge(n);
    const freshDir = leg === "upgrade" ? freshTo : freshFrom;
    legs.push({
      leg,
      result,
      ...(freshDir ? { fresh: againstFresh(await judge(freshDir), result, topics) } : {}),
    });
  }
  // the source's known issues: the run's own topics before the upgrade (neither a leg topic nor the one that reads
  // the configuration, which every run records), else a fresh bundle of it
  const legOrConfig = new Set(
    topics
      .filter(
        (t) => t.properties.some((p) => p.leg) || Object.values(t.records).some((d) => d?.configuration),
      )
      .map((t) => t.name),
  );
  const ranBefore = up.topics.some((t) => !legOrConfig.has(t));
  const before = ranBefore ? up : freshFrom ? await judge(freshFrom) : null;
  const props = new Map(topics.flatMap((t) => t.properties.map((p) => [p.id, p] as const)));
  const mode = meta.mode;
  const sourceDeclares = (id: string, upstream: string | undefined) => {
    const e = props.get(id)?.expect[mode];
    if (!e || upstream === undefined) return false;
    const d = resolveVersion(e, meta.upgrade?.from).deviation;
    return d?.kind === "known-issue" && d.upstream === upstream;
  };
  return judgeUpgrade({ upgrade: up, legs, before, allowKnown: o.allowKnown === true, sourceDeclares });
}
