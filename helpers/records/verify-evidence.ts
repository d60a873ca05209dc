import { BundleFault, readBundleRaw } from "../bundle/files.ts";
import { checkCallRecord } from "../bundle/read.ts";
import type { CallRecord } from "../exec/record.ts";
import { isEvidenceItem, NOT_RECORDED, type Place, showPlace } from "./evidence.ts";

/**
 * A bundle's files as evidence reads them (each read once), as untrusted input: a place names a file inside
 * the bundle, never one elsewhere through `..` or a link (helpers/bundle/files.ts), within the read caps.
 */
export class BundleFiles {
  private readonly lines = new Map<string, string[] | null>();
  private readonly calls = new Map<string, Map<number, CallRecord> | null>();

  constructor(readonly dir: string) {}

  /**
   * A file's lines (split on `\n`, as evidence numbers them); null when the bundle has no such file. A place
   * out of the bundle, or past a cap, is a BundleFault.
   */
  fileLines(file: string): string[] | null {
    if (!this.lines.has(file)) {
      const text = file === NOT_RECORDED ? null : readBundleRaw(this.dir, file);
      this.lines.set(file, text === null ? null : text.split("\n"));
    }
    return this.lines.get(file) ?? null;
  }

  /** A call of calls/<topic>.jsonl by its sequence number; null when absent. */
  call(file: string, seq: number): CallRecord | null {
    if (!this.calls.has(file)) {
      const lines = this.fileLines(file);
      const calls = new Map<number, CallRecord>();
      lines?.forEach((l, i) => {
        if (l.trim() === "") return;
        let value: unknown;
        try {
          value = JSON.parse(l);
        } catch (err) {
          throw new BundleFault(this.dir, `${file}:${i + 1}`, `not JSON (${(err as Error).message})`);
        }
        const c = checkCallRecord(this.dir, file, i + 1, value);
        calls.set(c.seq, c);
      });
      this.calls.set(file, lines ? calls : null);
    }
    return this.calls.get(file)?.get(seq) ?? null;
  }

  /** The lines of the output a place is in: a raw file, or a call's stderr. */
  outputLines(p: Place): string[] | null {
    if (p.stream === "stderr") {
      const c = p.call === undefined ? null : this.call(p.file, p.call);
      return c ? c.stderr.split("\n") : null;
    }
    return this.fileLines(p.file);
  }
}

/** Why a place does not exist in the bundle, or null when it does. */
function placeFault(files: BundleFiles, p: Place): string | null {
  try {
    return placeFaultOf(files, p);
  } catch (err) {
    if (err instanceof BundleFault) return `${err.entry}: ${err.why}`;
    throw err;
  }
}

function placeFaultOf(files: BundleFiles, p: Place): string | null {
  if (p.file === NOT_RECORDED) return "its output was not recorded in the bundle";
  if (p.call !== undefined && files.call(p.file, p.call) === null) return `${p.file} has no call ${p.call}`;
  const lines = files.outputLines(p);
  if (lines === null) return `the bundle has no ${showPlace({ ...p, line: undefined })}`;
  if (p.line !== undefined && (p.line < 1 || p.line > lines.length))
    return `${showPlace(p)} is past its ${lines.length} lines`;
  return null;
}

/**
 * Why an evidence item does not hold in the bundle, or null when it does: a quote must be found verbatim at its
 * place (the file's line, or the call's stderr line), a derived value must name at least one place, and every
 * place it names must exist.
 */
export function evidenceFault(files: BundleFiles, item: unknown): string | null {
  if (!isEvidenceItem(item))
    return "not an evidence item (a plain line: the bundle was recorded with an older suite)";
  if ("quote" in item) {
    const bad = placeFault(files, item.at);
    if (bad) return bad;
    const actual = (files.outputLines(item.at) as string[])[item.at.line - 1];
    return actual === item.quote
      ? null
      : `${showPlace(item.at)} reads ${JSON.stringify(actual)}, not the quoted ${JSON.stringify(item.quote)}`;
  }
  if (item.from.length === 0) return `derived value ${JSON.stringify(item.derived)} names no source`;
  for (const p of item.from) {
    const bad = placeFault(files, p);
    if (bad) return `derived value ${JSON.stringify(item.derived)}: ${bad}`;
  }
  return null;
}

export interface EvidenceTally {
  quoted: number;
  derived: number;
  faults: { item: unknown; why: string }[];
}

/** Every item checked against the bundle: how many are quotes, how many derived values, and what does not hold. */
export function tallyEvidence(files: BundleFiles, items: unknown[]): EvidenceTally {
  const t: EvidenceTally = { quoted: 0, derived: 0, faults: [] };
  for (const item of items) {
    const why = evidenceFault(files, item);
    if (why) t.faults.push({ item, why });
    else if (isEvidenceItem(item) && "quote" in item) t.quoted++;
    else t.derived++;
  }
  return t;
}
