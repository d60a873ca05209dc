/**
 * A raw output in a bundle: `raw/<topic>/NNN-….txt`, or, above RAW_COMPRESS_OVER bytes, the same name with
 * `.gz` (gzip, level 9): a full bundle's dumps (the scale measurement's 200-Service lists, conntrack tables,
 * the upgrade's logs) are most of its size and shrink 10-20×. Every reader goes through readRawFile, so a
 * compressed output reads exactly as a plain one; evidence names the file as it is on disk (`zcat` reads it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { gunzipCapped } from "../bundle/files.ts";
import { UserError } from "../errors.ts";

/** Outputs (and stdin) larger than this are stored compressed. */
export const RAW_COMPRESS_OVER = 4096;

export const isCompressed = (file: string) => file.endsWith(".gz");

/**
 * The text of a raw file the suite wrote (tests, tools), gunzipped when its name says so, within the same cap
 * as a bundle's (LIMITS.rawBytes). A bundle being checked is read through helpers/bundle/files.ts instead.
 */
export function readRawFile(path: string): string {
  const bytes = readFileSync(path);
  return (
    isCompressed(path) ? gunzipCapped(bytes, (why) => new UserError(`${path} ${why}`)) : bytes
  ).toString("utf8");
}

/** Writes `text` at `path` (`path` + ".gz", compressed, when it is large); returns the name used. */
export function writeRawFile(path: string, text: string): string {
  if (Buffer.byteLength(text) <= RAW_COMPRESS_OVER) {
    writeFileSync(path, text);
    return path;
  }
  writeFileSync(`${path}.gz`, gzipSync(Buffer.from(text, "utf8"), { level: 9 }));
  return `${path}.gz`;
}
