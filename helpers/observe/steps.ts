import { NotRecorded } from "../exec/replay.ts";
import { formatEndpoint } from "../parse/address.ts";
import { type LbList, parseBpfLbList } from "../parse/bpf-lb-list.ts";
import { type CurlResult, curlArgv, curlBodyArgv, curlBodyLine, parseCurl } from "../parse/curl.ts";
import { parseServiceList } from "../parse/service-list.ts";
import { findLbService, viewNotAllActive } from "../records/common.ts";
import { derive, type EvidenceItem, type Quote, RawText, type Read } from "../records/evidence.ts";
import type { NodeBackends, Probe } from "../records/types.ts";
import { ciliumDbgRaw } from "./agent.ts";
import { nodes, type PodInfo } from "./cluster.ts";
import { DEADLINES, type RunContext, waitFor, waitSettled } from "./context.ts";
import { TARGET_PORT } from "./workloads.ts";

/** Observation steps several topics share: the LB map (and waiting for it), a node's kernel, curl from a target. */
export async function lbList(ctx: RunContext, node: string, timeoutMs?: number): Promise<Read<LbList>> {
  const raw = await ciliumDbgRaw(ctx, node, ["bpf", "lb", "list"], timeoutMs);
  return { parsed: parseBpfLbList(raw.text), raw };
}

/**
 * Each node's view of a Service (by ClusterIP, port 80, TCP): `address (state)` from its agent's `cilium-dbg service
 * list`, the lines quoted into `ev` in the nodes' order (whichever answered first: a replay quotes the same lines).
 */
export async function serviceViews(
  ctx: RunContext,
  nodes: string[],
  ip: string,
  ev: EvidenceItem[],
): Promise<NodeBackends[]> {
  const read = await Promise.all(
    nodes.map(async (node) => {
      const raw = await ciliumDbgRaw(ctx, node, ["service", "list"]);
      const svc = parseServiceList(raw.text).services.find(
        (s) => s.frontend === `${ip}:80` && s.protocol !== "UDP",
      );
      const quoted: EvidenceItem[] = svc?.line
        ? [raw.quote(svc.line), ...svc.backends.slice(1).flatMap((b) => (b.line ? [raw.quote(b.line)] : []))]
        : [derive(`no ${ip}:80 in ${node}'s service list`, raw)];
      return {
        view: { node, backends: (svc?.backends ?? []).map((b) => `${b.address} (${b.state})`) },
        quoted,
      };
    }),
  );
  for (const r of read) ev.push(...r.quoted);
  return read.map((r) => r.view);
}

/**
 * Polls every node's view of a Service (serviceViews) until each lists exactly `backends` (address:port), each
 * active, or 30 s: the last reading and its quoted lines (a roll read back after agents restarted).
 */
export async function waitViewsAllActive(
  ctx: RunContext,
  what: string,
  nodes: string[],
  ip: string,
  backends: string[],
): Promise<{ views: NodeBackends[]; evidence: EvidenceItem[] }> {
  const { value } = await waitSettled(ctx, {
    what,
    deadlineMs: 30_000,
    intervalMs: 2000,
    probe: async () => {
      const evidence: EvidenceItem[] = [];
      return { views: await serviceViews(ctx, nodes, ip, evidence), evidence };
    },
    done: (r) => viewNotAllActive(r.views, backends) === undefined,
    show: (r) => r.views.map((v) => `${v.node} [${v.backends.join(", ")}]`).join("; "),
  });
  return value;
}

/** Polls the agent's BPF LB map until the frontend's slots are exactly `want` (ip:port), or the deadline. */
export async function waitSlots(
  ctx: RunContext,
  node: string,
  frontend: string,
  want: string[],
): Promise<{ lb: Read<LbList>; elapsedMs: number }> {
  const wanted = [...want].sort().join(",");
  const { value, elapsedMs } = await waitFor(ctx, {
    what: `${want.length} backend slots for ${frontend} in the agent on ${node}`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: () => lbList(ctx, node),
    done: (lb) => slotAddresses(lb.parsed, frontend).sort().join(",") === wanted,
    show: (lb) => `slots [${slotAddresses(lb.parsed, frontend).join(", ")}]`,
  });
  ctx.log(`${frontend}: ${want.length} backend slots in the map after ${(elapsedMs / 1000).toFixed(1)} s`);
  return { lb: value, elapsedMs };
}

export function slotAddresses(lb: LbList, frontend: string): string[] {
  return (findLbService(lb, frontend)?.backends ?? []).map((b) => b.address ?? "?");
}

export const backendsOf = (ps: PodInfo[]) => ps.map((p) => formatEndpoint(p.ip, TARGET_PORT));

export async function kernelOf(ctx: RunContext, node: string): Promise<string | null> {
  return (await nodes(ctx)).find((n) => n.name === node)?.kernel ?? null;
}

/** A curl probe's result with its outputs at their places: the write-out in raw/, `-v`'s lines in the call's stderr. */
export interface CurlRead extends CurlResult {
  stdout: RawText;
  stderr: RawText;
  /** The lines that decided it (write-out, the `curl: (N)` line, the errno line), quoted at their place. */
  evidence: Quote[];
}

/** One of a curl probe's lines (`at.writeOut`, `at.errno`, …) quoted at its place in its stream, or null. */
export function curlLineQuote(
  c: Pick<CurlRead, "stdout" | "stderr">,
  l: CurlResult["at"]["writeOut"],
): Quote | null {
  return l ? (l.stream === "stdout" ? c.stdout : c.stderr).quote(l.line) : null;
}

export function curlRead(r: Awaited<ReturnType<RunContext["exec"]["run"]>>): CurlRead {
  const c = parseCurl({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
  const streams = { stdout: RawText.stdout(r), stderr: RawText.stderr(r) };
  const evidence = [c.at.writeOut, c.at.error, c.at.errno]
    .map((l) => curlLineQuote(streams, l))
    .filter((x): x is Quote => x !== null);
  return { ...c, ...streams, evidence };
}

export async function curlFrom(
  ctx: RunContext,
  target: Parameters<RunContext["exec"]["run"]>[0]["target"],
  url: string,
  opts: { verbose?: boolean } = {},
): Promise<CurlRead> {
  return curlRead(await ctx.exec.run({ target, argv: curlArgv(url, opts) }));
}

/**
 * A step added after some bundles were recorded: replaying such a bundle yields null for it (the properties
 * that need it then skip, saying the bundle predates the step); on a cluster it runs like any other.
 */
export async function newerStep<T>(ctx: RunContext, what: string, run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (err) {
    if (ctx.replay && err instanceof NotRecorded) {
      ctx.log(`${what}: not in this bundle (recorded before the step existed)`);
      return null;
    }
    throw err;
  }
}

/** A probe's result (records/types.ts Probe) with the lines it was read from. */
export interface ProbeRead {
  probe: Probe;
  /** The write-out, the body's line, curl's error and errno lines, quoted at their place. */
  evidence: EvidenceItem[];
}

/**
 * One HTTP request that keeps its body (issue 34: which backend answered, the address it saw): GET `url` from
 * `target`, `from` naming the vantage point in the record (`pod far`, `node <name>`, `outside`). The body is its
 * last line, or its first line matching `pick` (a multi-line JSON answer's member).
 */
export async function probeFrom(
  ctx: RunContext,
  target: Parameters<RunContext["exec"]["run"]>[0]["target"],
  from: string,
  url: string,
  opts: { maxTime?: number; pick?: RegExp } = {},
): Promise<ProbeRead> {
  const r = await ctx.exec.run({ target, argv: curlBodyArgv(url, opts.maxTime) });
  const c = curlRead(r);
  const body = c.httpCode !== null ? curlBodyLine(r.stdout, opts.pick) : null;
  return {
    probe: {
      from,
      url,
      exit: c.exitCode,
      verdict: c.verdict,
      http: c.httpCode,
      errno: c.errno,
      seconds: c.timeTotal,
      body: body?.text ?? null,
    },
    evidence: [...(body ? [c.stdout.quote(body.line)] : []), ...c.evidence],
  };
}

/** The outside client's address: the first IPv4 address `hostname -i` prints there. */
export async function outsideAddress(
  ctx: RunContext,
): Promise<{ ip: string; evidence: EvidenceItem[] } | null> {
  const r = await ctx.exec.run({ target: { kind: "outside" }, argv: ["hostname", "-i"] }).catch(() => null);
  if (!r || r.exitCode !== 0) return null;
  const raw = RawText.stdout(r);
  const ip = r.stdout.split(/\s+/).find((w) => /^\d+\.\d+\.\d+\.\d+$/.test(w));
  const q = raw.find((l) => ip !== undefined && l.includes(ip));
  return ip && q ? { ip, evidence: [q] } : null;
}
