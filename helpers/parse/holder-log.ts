export interface HolderEvent {
  event: string;
  local?: string;
  peer?: string;
  [key: string]: unknown;
}

/** The holder logs one JSON object per line; the last `connected` event is the live connection. */
export function lastHolderConnection(log: string): HolderEvent | null {
  let last: HolderEvent | null = null;
  for (const line of log.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const e = JSON.parse(t) as HolderEvent;
      if (e.event === "connected") last = e;
    } catch {
      // a torn last line while the log is being written
    }
  }
  return last;
}
