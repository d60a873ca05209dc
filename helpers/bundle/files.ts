/**
 * Reading an evidence bundle as untrusted input. Bundles travel (CI artifacts, tickets, other teams), so every
 * path a bundle names — a call's stdoutFile, an evidence place, its own fixed files — is resolved inside the
 * bundle's folder: a path that climbs out (`..`, absolute) or a link that leads out of it, to a FIFO or to a
 * device, is refused with one line naming the entry. Every read has a declared cap (LIMITS, listed in
 * docs/report-and-cli.md "Limits"), checked on the size before reading and, for a compressed raw output, while inflating.
 */

import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { closeSync, fstatSync, lstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, normalize, sep } from "node:path";
import { gunzipSync } from "node:zlib";
import { UserError } from "../errors.ts";
import { jsonErrorOffset } from "../parse/json-error.ts";

const MiB = 1024 * 1024;

/** The caps on what is read from a bundle (docs/report-and-cli.md "Limits" lists them). */
export const LIMITS = {
  /** One JSON or JSON Lines file of a bundle (bundle.json, calls/<topic>.jsonl, records/…, verdicts.jsonl, baseline/…), as stored. */
  jsonFileBytes: 32 * MiB,
  /** One raw output (raw/<topic>/…: a call's stdout, or a large stdin), as stored and, when gzipped, once inflated. */
  rawBytes: 64 * MiB,
  /** One line of a JSON Lines file (a call record, a stored verdict). */
  jsonLineBytes: 8 * MiB,
} as const;

/** `64 MiB` for a cap in bytes. */
export const showBytes = (n: number) => (n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`);

/**
 * A bundle that cannot be read as one: a path out of it, a cap passed, a malformed file. One line, exit 2;
 * `permanent` so a wait in a replay stops at once (helpers/poll.ts), and check never turns it into a verdict.
 */
export class BundleFault extends UserError {
  readonly permanent = true;
  constructor(
    readonly bundle: string,
    /** The entry at fault: `calls/ghost.jsonl:3`, `bundle.json:12`, `raw/ghost/007-….txt.gz`. */
    readonly entry: string,
    readonly why: string,
  ) {
    super(`bundle ${bundle}: ${entry}: ${why}`);
    this.name = "BundleFault";
  }
}

/** A string as a message shows it: quoted, control characters escaped, cut at 120 characters. */
export function shown(s: unknown): string {
  const text = typeof s === "string" ? s : String(s);
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);
}

/**
 * The bundle folder itself, resolved (links included): what every path it names must stay under. Resolved by the
 * system's realpath (`realpathSync.native`: one call), not Node's own, which lstat()s every component of the
 * path: that was 2 s of `npm test`'s CPU, every file of every bundle read resolving its folder's ten components.
 */
export function bundleRoot(dir: string): string {
  try {
    const real = realpathSync.native(dir);
    if (!statSync(real).isDirectory()) throw new UserError(`${dir} is not an evidence bundle (not a folder)`);
    return real;
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(
      `${dir} is not an evidence bundle (${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such folder" : ((err as NodeJS.ErrnoException).code ?? String(err))})`,
    );
  }
}

/** True when `path` is `root` or under it. */
export function isUnder(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/**
 * The real path of `rel` inside the bundle `dir`, or null when there is no such entry. Refused (BundleFault,
 * naming `entry`): a path that is not relative or climbs out, a link whose target is outside the bundle or
 * missing, anything but a regular file.
 */
export function resolveInBundle(dir: string, rel: unknown, entry: string = String(rel)): string | null {
  const fault = (why: string) => new BundleFault(dir, entry, why);
  if (typeof rel !== "string" || rel === "") throw fault(`${shown(rel)} is not a path in the bundle`);
  if (rel.includes("\0")) throw fault(`${shown(rel)} holds a NUL byte`);
  const norm = normalize(rel);
  if (isAbsolute(rel) || norm === ".." || norm.startsWith(`..${sep}`))
    throw fault(`${shown(rel)} leaves the bundle (only paths inside it are read)`);
  const root = bundleRoot(dir);
  const path = join(root, norm);
  try {
    lstatSync(path);
  } catch {
    return null;
  }
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch {
    throw fault(`${shown(rel)} is a link that leads nowhere`);
  }
  // the message names the entry, not where it leads: a link to /proc/self/environ or /proc/self/cwd would
  // otherwise echo a path of this machine into a log (issue 45)
  if (!isUnder(root, real))
    throw fault(`${shown(rel)} is a link out of the bundle; only files inside it are read`);
  // inside the bundle, a link would let one call's recorded output stand for another's: none is followed
  if (real !== path)
    throw fault(
      `${shown(rel)} is a symbolic link: a bundle's files are read as themselves, never through a link (a linked folder included)`,
    );
  const st = statSync(real);
  if (!st.isFile()) throw fault(`${shown(rel)} is not a regular file`);
  // a second hard link makes the file another one too (any file on the same filesystem, outside the bundle)
  if (st.nlink > 1)
    throw fault(
      `${shown(rel)} has ${st.nlink} hard links: a bundle's files are read only when they are nothing else`,
    );
  return real;
}

/** The byte offset of the first byte that is not valid UTF-8 in `bytes`, or -1 when they all are. */
export function invalidUtf8At(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  const n = bytes.length;
  for (let i = 0; i < n; ) {
    const b = bytes[i] as number;
    const len =
      b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > n) return i;
    for (let k = 1; k < len; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return i;
    const b1 = bytes[i + 1] as number;
    // overlong forms, surrogates, past U+10FFFF
    if (
      (b === 0xe0 && b1 < 0xa0) ||
      (b === 0xed && b1 > 0x9f) ||
      (b === 0xf0 && b1 < 0x90) ||
      (b === 0xf4 && b1 > 0x8f)
    )
      return i;
    i += len;
  }
  return -1;
}

/**
 * Bytes of the bundle as text: every file it holds is text (JSON, a command's output), so bytes that are not
 * UTF-8 are damaged evidence, refused (a decoder would make U+FFFD of them, and a parser a failure of the cluster).
 */
function utf8(dir: string, entry: string, bytes: Buffer): string {
  const at = invalidUtf8At(bytes);
  if (at >= 0)
    throw new BundleFault(
      dir,
      entry,
      `not valid UTF-8 at byte ${at}: damaged evidence (a bundle's files are text; it is refused, not judged)`,
    );
  return bytes.toString("utf8");
}

/** The bytes of a bundle file, refused past `cap` before reading; null when absent. */
export function readBundleBytes(dir: string, rel: string, cap: number, entry: string = rel): Buffer | null {
  const real = resolveInBundle(dir, rel, entry);
  if (real === null) return null;
  const fd = openSync(real, "r");
  try {
    const size = fstatSync(fd).size;
    if (size > cap)
      throw new BundleFault(
        dir,
        entry,
        `${size} bytes, over the ${showBytes(cap)} cap for this file (docs/report-and-cli.md "Limits")`,
      );
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return off === size ? buf : buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

/** A JSON or JSON Lines file of the bundle as text (capped at LIMITS.jsonFileBytes); null when absent. */
export function readBundleJsonText(dir: string, rel: string, entry: string = rel): string | null {
  const bytes = readBundleBytes(dir, rel, LIMITS.jsonFileBytes, entry);
  return bytes === null ? null : utf8(dir, entry, bytes);
}

/** Inflates a gzipped raw output, refusing past LIMITS.rawBytes (the inflation stops there). */
export function gunzipCapped(bytes: Buffer, onFault: (why: string) => Error): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: LIMITS.rawBytes });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError)
      throw onFault(
        `inflates past the ${showBytes(LIMITS.rawBytes)} cap for one raw output (docs/report-and-cli.md "Limits")`,
      );
    throw onFault(`is not valid gzip (${e.message})`);
  }
}

/**
 * Inflated raw outputs of this process, keyed by the gzip bytes' hash (so a changed file is never served from
 * here), the most recent first, at most INFLATED_CACHE_CHARS in all: judging a bundle reads each raw output twice
 * (replayed, then its evidence lines checked), and the tests judge the same outputs in many ways (3.8 s of
 * `npm test`'s CPU inflated them, most of it again).
 */
const inflated = new Map<string, string>();
let inflatedChars = 0;
const INFLATED_CACHE_CHARS = 64 << 20;

function inflateCached(
  bytes: Buffer,
  onFault: (why: string) => Error,
  asText: (b: Buffer) => string,
): string {
  const key = createHash("sha1").update(bytes).digest("hex");
  const hit = inflated.get(key);
  if (hit !== undefined) {
    inflated.delete(key);
    inflated.set(key, hit);
    return hit;
  }
  const text = asText(gunzipCapped(bytes, onFault));
  inflated.set(key, text);
  inflatedChars += text.length;
  for (const [k, v] of inflated) {
    if (inflatedChars <= INFLATED_CACHE_CHARS) break;
    inflated.delete(k);
    inflatedChars -= v.length;
  }
  return text;
}

/** A raw output of the bundle (gunzipped when its name ends .gz), capped at LIMITS.rawBytes; null when absent. */
export function readBundleRaw(dir: string, rel: string, entry: string = rel): string | null {
  const bytes = readBundleBytes(dir, rel, LIMITS.rawBytes, entry);
  if (bytes === null) return null;
  return rel.endsWith(".gz")
    ? inflateCached(
        bytes,
        (why) => new BundleFault(dir, entry, why),
        (b) => utf8(dir, entry, b),
      )
    : utf8(dir, entry, bytes);
}

type Json = unknown;

/**
 * Each line of a JSON Lines file of the bundle, parsed, with its 1-based line number (blank lines skipped);
 * a line that is not JSON, or longer than LIMITS.jsonLineBytes, is one BundleFault naming it. null: absent.
 */
export function readBundleJsonLines(dir: string, rel: string): { line: number; value: Json }[] | null {
  const text = readBundleJsonText(dir, rel);
  if (text === null) return null;
  const out: { line: number; value: Json }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    if (l.trim() === "") continue;
    const entry = `${rel}:${i + 1}`;
    if (l.length > LIMITS.jsonLineBytes)
      throw new BundleFault(
        dir,
        entry,
        `a line of ${l.length} characters, over the ${showBytes(LIMITS.jsonLineBytes)} cap (docs/report-and-cli.md "Limits")`,
      );
    try {
      out.push({ line: i + 1, value: JSON.parse(l) });
    } catch (err) {
      throw new BundleFault(dir, entry, `not JSON (${(err as Error).message.split("\n")[0]})`);
    }
  }
  return out;
}

/** The line (1-based) of character `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** A JSON file of the bundle, parsed; a syntax error names its line. null: absent. */
export function readBundleJson(dir: string, rel: string): { text: string; value: Json } | null {
  const text = readBundleJsonText(dir, rel);
  if (text === null) return null;
  try {
    return { text, value: JSON.parse(text) };
  } catch (err) {
    const msg = (err as Error).message.split("\n")[0] as string;
    let at = -1;
    try {
      at = jsonErrorOffset(text);
    } catch {
      // nested too deep to walk: the file is named without its line
    }
    throw new BundleFault(dir, at >= 0 ? `${rel}:${lineAt(text, at)}` : rel, `not valid JSON (${msg})`);
  }
}
