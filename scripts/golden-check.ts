/**
 * `npx tsx scripts/golden-check.ts`: writes what `check` says on each shipped bundle into suites/golden/, the
 * reference suites/golden.test.ts holds the code to. Run it only when the bundles or a declaration change on
 * purpose, and say in the commit which verdicts changed and why.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkBundle, verdictRows } from "../helpers/check.ts";
import { bundleName, goldenFile, SHIPPED_BUNDLES } from "../suites/environment.ts";
import { TOPICS } from "../suites/topics.ts";

// `npx tsx scripts/golden-check.ts suites/bundles/X …`: only those bundles (a newly shipped one)
const only = process.argv.slice(2).map((a) => resolve(a));
for (const dir of only.length > 0
  ? SHIPPED_BUNDLES.filter((d) => only.some((o) => d === o || d.startsWith(`${o}/`)))
  : SHIPPED_BUNDLES) {
  const r = await checkBundle(dir, TOPICS);
  const verdicts = verdictRows(r);
  const name = bundleName(dir);
  writeFileSync(
    join(import.meta.dirname, "..", "suites", "golden", goldenFile(name)),
    `${JSON.stringify({ bundle: `suites/bundles/${name}`, mode: r.mode, cilium: r.cilium, verdicts }, null, 1)}\n`,
  );
  process.stdout.write(`${name}: ${verdicts.length} verdicts\n`);
}
// in the repository's JSON style, so `npm test`'s biome check passes
execFileSync("npx", ["biome", "format", "--write", join(import.meta.dirname, "..", "suites", "golden")], {
  stdio: "ignore",
});
