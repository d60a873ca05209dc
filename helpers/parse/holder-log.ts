export interface HolderEvent {
  event: string;
  local?: string;
  peer?: string;
  [key: string]: unknown;
}

/** The holder logs one JSON object per line: its events, in order (a torn last line is left out). */
export function holderEvents(log: string): HolderEvent[] {
  return log
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as HolderEvent];
      } catch {
        // a torn last line while the log is being written
        return [];
      }
    });
}

/** The last `connected` event: the live connection. */
export function lastHolderConnection(log: string): HolderEvent | null {
  return (
    holderEvents(log)
      .filter((e) => e.event === "connected")
      .at(-1) ?? null
  );
}

/** The holder's events with their 1-based line in the log (torn lines left out). */
export function holderEventLines(log: string): { event: HolderEvent; line: number }[] {
  const out: { event: HolderEvent; line: number }[] = [];
  log.split("\n").forEach((l, i) => {
    if (!l.trim().startsWith("{")) return;
    try {
      out.push({ event: JSON.parse(l) as HolderEvent, line: i + 1 });
    } catch {
      // a torn last line while the log is being written
    }
  });
  return out;
}
