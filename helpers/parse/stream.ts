import { ctEntryJson, forEachCtEntry } from "./bpf-ct-list.ts";

/**
 * Formats whose records are one per line, parsed as a stream: a block of whole lines at a time, each record
 * handed on as its JSON text as it is read, so neither the input nor the output is ever held whole
 * (`parse --ndjson`).
 */
export const STREAMING: Record<
  string,
  (block: string, lineOffset: number, emit: (json: string) => void) => void
> = {
  "bpf-ct-list": (block, lineOffset, emit) => forEachCtEntry(block, (e) => emit(ctEntryJson(e)), lineOffset),
};

/**
 * Reads `source` in chunks and calls `onBlock` with the whole lines read so far (the last, unfinished
 * line waits for the next chunk) and how many lines came before them.
 */
export async function forEachBlock(
  source: AsyncIterable<Buffer | string>,
  onBlock: (block: string, lineOffset: number) => void | Promise<void>,
): Promise<void> {
  const decoder = new TextDecoder("utf-8");
  let tail = "";
  let lines = 0;
  for await (const chunk of source) {
    const text = tail + (typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      tail = text;
      continue;
    }
    const block = text.slice(0, cut + 1);
    tail = text.slice(cut + 1);
    await onBlock(block, lines);
    lines += countLines(block);
  }
  tail += decoder.decode();
  if (tail !== "") await onBlock(tail, lines);
}

function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/** Output in ~1 MiB writes that wait for the sink to drain (memory stays flat whatever the input size). */
export class BufferedWriter {
  private buf: string[] = [];
  private size = 0;
  constructor(
    private readonly write: (s: string) => Promise<void>,
    private readonly limit = 1 << 20,
  ) {}

  async push(s: string): Promise<void> {
    this.buf.push(s);
    this.size += s.length;
    if (this.size >= this.limit) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.size === 0) return;
    const s = this.buf.join("");
    this.buf = [];
    this.size = 0;
    await this.write(s);
  }
}
