import { NotRecorded } from "../exec/replay.ts";
import { formatEndpoint } from "../parse/address.ts";
import { type LbList, parseBpfLbList } from "../parse/bpf-lb-list.ts";
import { curlArgv, parseCurl } from "../parse/curl.ts";
import { findLbService } from "../records/common.ts";
import { ciliumDbg } from "./agent.ts";
import { nodes, type PodInfo } from "./cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "./context.ts";
import { TARGET_PORT } from "./workloads.ts";

/** Observation steps several topics share: the LB map (and waiting for it), a node's kernel, curl from a target. */
export async function lbList(ctx: RunContext, node: string): Promise<LbList> {
  return parseBpfLbList(await ciliumDbg(ctx, node, ["bpf", "lb", "list"]));
}

/** Polls the agent's BPF LB map until the frontend's slots are exactly `want` (ip:port), or the deadline. */
export async function waitSlots(
  ctx: RunContext,
  node: string,
  frontend: string,
  want: string[],
): Promise<{ lb: LbList; elapsedMs: number }> {
  const wanted = [...want].sort().join(",");
  const { value, elapsedMs } = await waitFor(ctx, {
    what: `${want.length} backend slots for ${frontend} in the agent on ${node}`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: () => lbList(ctx, node),
    done: (lb) => slotAddresses(lb, frontend).sort().join(",") === wanted,
    show: (lb) => `slots [${slotAddresses(lb, frontend).join(", ")}]`,
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

export async function curlFrom(
  ctx: RunContext,
  target: Parameters<RunContext["exec"]["run"]>[0]["target"],
  url: string,
) {
  const r = await ctx.exec.run({
    target,
    argv: curlArgv(url),
  });
  return parseCurl({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
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
