import { describe, expect, it } from "vitest";
import { checkBundle } from "../helpers/check.ts";
import type { Verdict } from "../helpers/properties/judge.ts";
import { bundleName, SHIPPED_BUNDLES } from "./environment.ts";
import { TOPICS } from "./topics.ts";

/**
 * Every pass agrees with every observation it quotes. An audit of the shipped bundles found a pass whose own raw
 * line contradicted its claim: `ipv6.ghost-fails-fast` passed "fails at once with exit 7" while the quoted
 * write-out said `time_total` 1.0268 s, one SYN retransmission. The claims now say what their judge checks (the
 * exit code; how soon is the seconds properties'), and this scan keeps any claim of "at once" honest: a passing
 * verdict that says so, and neither expected nor observed a wait (the per-mode claims name kube-proxy's wait
 * beside Cilium's refusal), quotes no curl time past SOON_S.
 */

/**
 * Half of Linux's initial retransmission timeout (1 s): a connection refused after this waited for a retransmitted
 * SYN, which no "at once" covers, while a busy two-core machine's slowest refusal in the shipped bundles took 0.012 s.
 */
const SOON_S = 0.5;

/** The curl times a quoted line carries: its write-out's `time_total`, its stderr's "after N ms". */
function quotedSeconds(line: string): number[] {
  return [
    ...[...line.matchAll(/time_total[=: ]+(\d+(?:\.\d+)?)/g)].map((m) => Number(m[1])),
    ...[...line.matchAll(/\bafter (\d+) ms\b/g)].map((m) => Number(m[1]) / 1000),
  ];
}

/** The passes that claim "at once" and quote a time past SOON_S: each with the quote that contradicts it. */
function contradictions(verdicts: Verdict[]): { id: string; quote: string; seconds: number }[] {
  const out: { id: string; quote: string; seconds: number }[] = [];
  for (const v of verdicts) {
    // a claim that names a wait for this mode (kube-proxy's beside Cilium's refusal) expects or observes it
    const waits = /TIMEOUT|timed out|^28$/.test(v.observed) || /TIMEOUT|≥/.test(v.expected);
    if (v.status !== "pass" || !/\bat once\b/.test(v.claim) || waits) continue;
    for (const e of v.evidence) {
      const quote = "quote" in e && typeof e.quote === "string" ? e.quote : null;
      if (quote === null) continue;
      for (const seconds of quotedSeconds(quote))
        if (seconds > SOON_S) out.push({ id: v.id, quote, seconds });
    }
  }
  return out;
}

describe("no shipped pass contradicts what it quotes", () => {
  it("the scan finds a contradiction where there is one (a verdict WRITTEN BY US, the audit's case)", () => {
    const v = {
      id: "ipv6.ghost-fails-fast",
      claim: "curl from a Pod to ghost6 fails at once with exit 7",
      status: "pass",
      expected: "7",
      observed: "7",
      evidence: [
        {
          place: "raw/ipv6/014-curl.txt:1",
          quote: "http_code=000 time_connect=0.000000 time_total=1.026791",
        },
        {
          place: "raw/ipv6/014-curl.txt:2",
          quote: "curl: (7) Failed to connect to fd00:10:96::f1 port 80 after 1026 ms",
        },
      ],
    } as unknown as Verdict;
    expect(contradictions([v]).map((c) => c.seconds)).toEqual([1.026791, 1.026]);
    // a wait that its claim names is no contradiction, nor is a refusal in a millisecond
    expect(contradictions([{ ...v, observed: "TIMEOUT" }])).toEqual([]);
    expect(contradictions([{ ...v, expected: "each ≥ 4.9" }])).toEqual([]);
    expect(
      contradictions([
        { ...v, evidence: [{ place: "x:1", quote: "time_total=0.000858" }] } as unknown as Verdict,
      ]),
    ).toEqual([]);
  });

  it.each(SHIPPED_BUNDLES.map((d) => [bundleName(d), d] as const))("%s", async (_name, dir) => {
    const r = await checkBundle(dir, TOPICS);
    expect(contradictions(r.verdicts)).toEqual([]);
  });
});
