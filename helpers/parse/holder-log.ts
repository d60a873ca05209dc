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

/** A holder stall of this length or more explains a break that follows it (the request loop's STALL_LAG_MS). */
export const HOLDER_STALL_MS = 500;
/** How far before a break a stall may end and still explain it: the holder gives up after 3 unanswered seconds. */
const BREAK_REACH_MS = 3500;

/**
 * Why the holder's own stall explains a break at `breakAt` (ms since the epoch), or null: a lag event (the holder's
 * sampler fired `ms` late, due at `due`) of HOLDER_STALL_MS or more whose window reaches into the 3.5 s before it.
 */
export function holderStall(events: HolderEvent[], breakAt: number): string | null {
  for (const e of events) {
    if (e.event !== "lag" || typeof e.due !== "string" || typeof e.ms !== "number") continue;
    const from = Date.parse(e.due);
    const to = from + e.ms;
    if (e.ms >= HOLDER_STALL_MS && to >= breakAt - BREAK_REACH_MS && from <= breakAt)
      return `the holder itself was not running for ${e.ms} ms from ${e.due}, just before the break`;
  }
  return null;
}
