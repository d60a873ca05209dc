import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { checkBundle, verdictRows } from "../helpers/check.ts";
import { BundleCopies } from "../helpers/testing/tamper.ts";
import { TOPICS } from "../suites/topics.ts";
import { compactBundle } from "./compact-bundle.ts";

const copies = new BundleCopies();
afterAll(() => copies.cleanup());

/**
 * A copy stored as recordings were before they gzipped large outputs: every raw `.gz` written out as its text,
 * the names in calls/, records/ and verdicts.jsonl following (every shipped bundle is compact now).
 */
function expand(dir: string): void {
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name);
    if (!e.isFile()) continue;
    if (e.name.endsWith(".txt.gz")) {
      writeFileSync(path.slice(0, -3), gunzipSync(readFileSync(path)));
      rmSync(path);
    } else if (e.name.endsWith(".jsonl") || e.name.endsWith(".json"))
      writeFileSync(path, readFileSync(path, "utf8").replaceAll(".txt.gz", ".txt"));
  }
}

function size(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
}

describe("compacting a bundle (large raw outputs and stdin stored gzipped)", { timeout: 60_000 }, () => {
  it("check gives the very same verdicts, evidence places follow the renamed files, the bundle shrinks", async () => {
    // the drop profile's kube-proxy bundle, written out as a bundle recorded before outputs were gzipped
    const dir = copies.copy("drop-kube-proxy");
    expand(dir);
    const before = await checkBundle(dir, TOPICS);
    const bytes = size(dir);
    const r = compactBundle(dir);
    expect(r.renamed).toBeGreaterThan(15);
    const after = await checkBundle(dir, TOPICS);
    const places = (rows: ReturnType<typeof verdictRows>) =>
      JSON.stringify(rows).replace(/(raw\/[^"]+?\.txt)\.gz/g, "$1");
    expect(places(verdictRows(after))).toBe(places(verdictRows(before)));
    expect(size(dir)).toBeLessThan(bytes / 2);
    // a second pass changes nothing
    expect(compactBundle(dir)).toEqual({ renamed: 0, stdin: 0 });
  });
});
