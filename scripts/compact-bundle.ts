/**
 * `npx tsx scripts/compact-bundle.ts BUNDLE…`: stores a bundle's large raw outputs and large stdin the way a
 * recording does now (helpers/exec/raw-file.ts: gzip above RAW_COMPRESS_OVER bytes), for bundles recorded
 * before it did. Only storage changes: every output reads back byte for byte (checked before anything is
 * removed), and the names in calls/, records/ and verdicts.jsonl follow the renamed files.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRawFile, writeRawFile } from "../helpers/exec/raw-file.ts";
import type { CallRecord } from "../helpers/exec/record.ts";

export function compactBundle(dir: string): { renamed: number; stdin: number } {
  const renames = new Map<string, string>();
  let stdin = 0;
  const callsDir = join(dir, "calls");
  for (const f of readdirSync(callsDir).filter((x) => x.endsWith(".jsonl"))) {
    const path = join(callsDir, f);
    const calls = readFileSync(path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as CallRecord);
    for (const c of calls) {
      if (!c.stdoutFile.endsWith(".gz")) {
        const text = readRawFile(join(dir, c.stdoutFile));
        const written = writeRawFile(join(dir, c.stdoutFile), text);
        if (written.endsWith(".gz")) {
          if (readRawFile(written) !== text)
            throw new Error(`${written} does not read back as ${c.stdoutFile}`);
          rmSync(join(dir, c.stdoutFile));
          renames.set(c.stdoutFile, `${c.stdoutFile}.gz`);
          c.stdoutFile = `${c.stdoutFile}.gz`;
        }
      }
      if (c.stdin !== undefined) {
        const base = c.stdoutFile.replace(/\.txt(\.gz)?$/, "");
        const written = writeRawFile(join(dir, `${base}.stdin.txt`), c.stdin);
        if (written.endsWith(".gz")) {
          c.stdinFile = written.slice(dir.length + 1);
          delete c.stdin;
          stdin++;
        } else rmSync(written);
      }
    }
    writeFileSync(path, calls.map((c) => `${JSON.stringify(c)}\n`).join(""));
  }
  // evidence names the files: follow the renames (a quoted name is a JSON string, replaced whole)
  const named = [
    join(dir, "verdicts.jsonl"),
    ...(existsSync(join(dir, "records"))
      ? readdirSync(join(dir, "records")).map((f) => join(dir, "records", f))
      : []),
  ].filter(existsSync);
  for (const file of named) {
    let text = readFileSync(file, "utf8");
    for (const [from, to] of renames) text = text.split(`"${from}"`).join(`"${to}"`);
    writeFileSync(file, text);
  }
  return { renamed: renames.size, stdin };
}

if (process.argv[1]?.endsWith("compact-bundle.ts")) {
  for (const dir of process.argv.slice(2)) {
    const r = compactBundle(dir);
    process.stdout.write(`${dir}: ${r.renamed} outputs and ${r.stdin} stdin stored compressed\n`);
  }
}
