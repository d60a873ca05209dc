import { StringDecoder } from "node:string_decoder";
import { ctEntryJson, forEachCtEntry } from "./bpf-ct-list.ts";

/**
 * Formats whose records are one per line, parsed as a stream: a block of whole lines at a time, each record
 * handed on as its JSON text as it is read, so neither the input nor the output is ever held whole
 * (`parse --ndjson`).
 */
export const STREAMING: Record<
  string,
  (block: string, lineOffset: number, emit: (json: string) => void) => number
> = {
  "bpf-ct-list": (block, lineOffset, emit) => forEachCtEntry(block, (e) => emit(ctEntryJson(e)), lineOffset),
};

/**
 * Reads `source` in chunks and calls `onBlock` with the whole lines read so far (the last, unfinished line
 * waits for the next chunk) and how many lines came before them; `onBlock` returns how many lines it read.
 */
export async function forEachBlock(
  source: AsyncIterable<Buffer | string>,
  onBlock: (block: string, lineOffset: number) => number | Promise<number>,
): Promise<void> {
  const decoder = new StringDecoder("utf8");
  let tail = "";
  let lines = 0;
  for await (const chunk of source) {
    const text = tail + (typeof chunk === "string" ? chunk : decoder.write(chunk));
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      tail = text;
      continue;
    }
    tail = text.slice(cut + 1);
    lines += await onBlock(text.slice(0, cut + 1), lines);
  }
  tail += decoder.end();
  if (tail !== "") await onBlock(tail, lines);
}

/**
 * One block's output rows, written straight into a byte buffer (joining a million small strings costs more
 * than parsing them); `take()` hands the bytes over and starts again. Memory is one block's output.
 */
export class RowBuffer {
  private buf = Buffer.allocUnsafe(1 << 22);
  private used = 0;

  add(row: string): void {
    if (this.used + row.length * 3 + 1 > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + row.length * 3 + 1));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.used += this.buf.write(row, this.used, "utf8");
    this.buf[this.used++] = 10;
  }

  /** The rows so far (a copy: the buffer is reused), or null when there are none. */
  take(): Buffer | null {
    if (this.used === 0) return null;
    const out = Buffer.from(this.buf.subarray(0, this.used));
    this.used = 0;
    return out;
  }
}
