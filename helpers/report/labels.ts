/**
 * What tells the report's columns apart (issue 37: at 35 bundles four columns read "1.20.2 / kpr / existing ·
 * existing-kpr"): each bundle's Cilium version (from → to for an upgrade), its mode, and its variant — its
 * datapath profile (bundle.json's, else the folder `profiles/<profile>/<mode>` it sits in), what its folder name
 * adds beside the mode (`1.19/drop-kpr`: drop), the leg of the upgrade it was run after (an upgrade bundle's
 * `after-upgrade/`, `after-rollback/`), a second recording's number (`kpr-2`: run 2), its provider when not kind,
 * and for a minor the suite has not declared, what its verdicts assumed (issue 38: "assumed from 1.20"). Columns
 * are grouped by version (an upgrade with the bundles of its legs).
 */
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { type BundleMeta, readMeta } from "../bundle/read.ts";
import { assumedText, expectationBasis } from "../properties/versions.ts";

export interface ColumnName {
  /** The whole name, unique among the report's columns: `1.20.2 / kpr / dsr-maglev · existing`. */
  label: string;
  /** The header's lines: version, mode, variant (empty when there is none). */
  head: string[];
  /** The group the column is shown in: its version, or the upgrade (`1.19.7 → 1.20.2`) for an upgrade and its legs. */
  group: string;
}

const LEGS: Record<string, string> = { "after-upgrade": "after upgrade", "after-rollback": "after rollback" };

/** An upgrade bundle's `from → to`, from its bundle.json. */
function upgradeOf(meta: BundleMeta): string | null {
  const u = meta.upgrade as { from?: unknown; to?: unknown } | undefined;
  return u && u.to !== undefined ? `${String(u.from ?? meta.cilium)} → ${String(u.to)}` : null;
}

/** The parent upgrade bundle of a leg's bundle (`…/kpr/after-upgrade`), when it is one. */
function parentUpgrade(dir: string): BundleMeta | null {
  if (!(basename(dir) in LEGS)) return null;
  const up = dirname(dir);
  if (!existsSync(join(up, "bundle.json"))) return null;
  try {
    const m = readMeta(up);
    return upgradeOf(m) ? m : null;
  } catch {
    return null;
  }
}

/** A column's name from its bundle.json and its folder. */
export function columnName(meta: BundleMeta, dir: string): ColumnName {
  const up = upgradeOf(meta);
  const version = up ?? String(meta.cilium);
  const mode = String(meta.mode);
  const folder = basename(dir);
  const parent = parentUpgrade(dir);
  // the leg's words with the version it left (`after upgrade from 1.18.11`, `after rollback from 1.20.2`)
  const leg = parent
    ? `${LEGS[folder] as string} from ${folder === "after-upgrade" ? String((parent.upgrade as { from?: unknown }).from ?? parent.cilium) : String((parent.upgrade as { to?: unknown }).to)}`
    : null;
  const profile =
    typeof meta.datapathProfile === "string" && meta.datapathProfile !== ""
      ? meta.datapathProfile
      : basename(dirname(dirname(dir))) === "profiles"
        ? basename(dirname(dir))
        : null;
  // what the folder's name says beside the mode and the provider (`drop-kpr` → drop, `existing-kpr` → nothing,
  // `kpr-2` → run 2: a second recording of one configuration); a leg's, what its upgrade's folder says
  const m = mode.replace(/[^A-Za-z0-9-]/g, "");
  const said = (parent ? basename(dirname(dir)) : folder)
    .replace(new RegExp(`-?${m}$|^${m}-?`), "")
    .replace(new RegExp(`^${String(meta.provider).replace(/[^A-Za-z0-9-]/g, "")}-?`), "");
  const tag = /^\d+$/.test(said) ? `run ${said}` : leg ? null : said;
  const provider = meta.provider !== "kind" && !leg ? String(meta.provider) : null;
  // a collection of shipped runs of some topics (`suites/bundles/<collection>/<minor or profile>/<mode>`): its name
  const up3 = dirname(dirname(dir));
  const collection =
    !parent && basename(dirname(up3)) === "bundles" && !["profiles", "bundles"].includes(basename(up3))
      ? basename(up3)
      : null;
  // a minor the suite has not declared: its verdicts were judged on the newest declared minor's expectations
  const from = expectationBasis(String(meta.cilium)).assumedFrom;
  const assumed = from ? assumedText(from) : null;
  const variant = [collection, profile, tag && tag !== profile ? tag : null, leg, provider, assumed]
    .filter((x): x is string => typeof x === "string" && x !== "")
    .join(" · ");
  return {
    label: [version, mode, variant].filter(Boolean).join(" / "),
    head: [version, mode, variant],
    group: parent ? (upgradeOf(parent) as string) : version,
  };
}

/**
 * Names for every column, unique: two bundles of the same version, mode and variant (two runs of one
 * configuration) are told apart by their folder.
 */
export function columnNames(cols: { meta: BundleMeta; dir: string }[]): ColumnName[] {
  const names = cols.map((c) => columnName(c.meta, c.dir));
  const count = new Map<string, number>();
  for (const n of names) count.set(n.label, (count.get(n.label) ?? 0) + 1);
  return names.map((n, i) => {
    if ((count.get(n.label) ?? 0) < 2) return n;
    const dir = (cols[i] as { dir: string }).dir;
    const folder = `${basename(dirname(dir))}/${basename(dir)}`;
    return {
      ...n,
      label: `${n.label} (${folder})`,
      head: [n.head[0] ?? "", n.head[1] ?? "", [n.head[2], folder].filter(Boolean).join(" · ")],
    };
  });
}

/** Numbers compare as numbers (1.9 before 1.18). */
const byVersion = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/**
 * The columns' order: grouped by version, the versions ascending, then the upgrades by their source version; in a
 * group, by mode (each mode's columns side by side, under one header: helpers/report/column-head.ts), then the order
 * given (path order for a folder). Returns the indexes of the columns in that order.
 */
export function groupedOrder(names: ColumnName[]): number[] {
  const isUpgrade = (g: string) => g.includes("→");
  const groups = [...new Set(names.map((n) => n.group))].sort(
    (a, b) => Number(isUpgrade(a)) - Number(isUpgrade(b)) || byVersion(a, b),
  );
  return groups.flatMap((g) => {
    const inGroup = names.flatMap((n, i) => (n.group === g ? [i] : []));
    const modes = [...new Set(inGroup.map((i) => names[i]?.head[1] ?? ""))];
    return modes.flatMap((m) => inGroup.filter((i) => (names[i]?.head[1] ?? "") === m));
  });
}
