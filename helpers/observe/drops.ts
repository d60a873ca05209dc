/**
 * What the datapath dropped while a piece of work ran: each node's BPF drop counters (`cilium-dbg bpf metrics list
 * -o json`, per reason, direction and BPF source line) read before and after it, the difference kept per node. The
 * source line says where the packet was lost; the window says during what (topics that run beside add their drops
 * to the same window, so a reason is read beside the work it fell in, not proof of which request it was).
 */

import { derive, type EvidenceItem } from "../records/evidence.ts";
import type { NodeDrop } from "../records/types.ts";
import type { NodeInfo } from "./cluster.ts";
import type { RunContext } from "./context.ts";
import { bpfMetrics, dropText, nodeDrops } from "./leg-agents.ts";

/** Runs `work` between two readings of the drop counters of `nodes` (in the order given). */
export async function dropsDuring<T>(
  ctx: RunContext,
  nodes: NodeInfo[],
  what: string,
  work: () => Promise<T>,
): Promise<{ value: T; drops: NodeDrop[]; evidence: EvidenceItem[] }> {
  const before = await bpfMetrics(ctx, nodes);
  const value = await work();
  const after = await bpfMetrics(ctx, nodes);
  const drops = nodeDrops(nodes, before, after);
  const raws = nodes.flatMap((n) => [before.get(n.name)?.raw, after.get(n.name)?.raw]);
  const evidence =
    drops.length > 0
      ? drops.map((d) =>
          derive(
            `dropped on ${d.node} during ${what}: ${dropText(d)}`,
            before.get(d.node)?.raw,
            after.get(d.node)?.raw,
          ),
        )
      : [derive(`no drop counted on ${nodes.map((n) => n.name).join(" or ")} during ${what}`, ...raws)];
  if (drops.length > 0)
    ctx.log(
      `drops during ${what}: ${drops.map((d) => `${d.node} ${d.packets} × ${d.reason} (${d.file}:${d.line})`).join("; ")}`,
    );
  return { value, drops, evidence };
}
