/**
 * Backends replaced during a leg: leg-roll (manifests/leg-roll.yaml, two Pods behind a ClusterIP) is applied before
 * the leg, rolled right after its change starts (the agents are restarting or being replaced then, so the new Pods'
 * endpoints are created while an agent is down or restoring), and read back once every agent is ready: each node's
 * agent must list exactly the new Pods as the Service's backends, each active. It is deleted after the leg, before
 * the topics run again (its Service would add rules the iptables topic counts whole).
 *
 * A bundle recorded before the legs replaced backends has none of these calls (each has a command of its own: the
 * apply and the delete name the namespace first): in a replay of it the first call gives way and the leg records no
 * roll; its property then says so.
 */

import { mustRun } from "../exec/types.ts";
import { formatEndpoint } from "../parse/address.ts";
import type { EvidenceItem } from "../records/evidence.ts";
import type { UpgradeLeg } from "../records/types.ts";
import { clusterIp, type PodInfo, pods } from "./cluster.ts";
import { type RunContext, waitSettled } from "./context.ts";
import { newerStep, waitViewsAllActive } from "./steps.ts";
import { renderManifest, waitReplaced } from "./workloads.ts";

const SELECTOR = "app=leg-roll";
const REPLICAS = 2;

/** A roll under way: the Pods it replaces (null: a replay of a bundle recorded before, or it could not start). */
export interface Roll {
  old: PodInfo[];
  error: string | null;
}

const kubectlIn = (ctx: RunContext, argv: string[], stdin?: string) =>
  mustRun(ctx.exec, {
    target: { kind: "kubectl" },
    argv: ["-n", ctx.namespace, ...argv],
    ...(stdin === undefined ? {} : { stdin }),
    timeoutMs: 200_000,
  });

const message = (err: unknown) => (err instanceof Error ? err.message.split("\n")[0] : String(err)) ?? "";

/** leg-roll applied and its two Pods ready, before the leg; null in a replay of a bundle recorded before. */
export async function deployRoll(ctx: RunContext): Promise<Roll | null> {
  const applied = await newerStep(ctx, "leg-roll", () =>
    kubectlIn(ctx, ["apply", "-f", "-"], renderManifest("leg-roll.yaml", ctx.namespace)),
  );
  if (applied === null) return null;
  const old = await waitReplaced(ctx, {
    what: "leg-roll's two Pods ready before the leg",
    namespace: ctx.namespace,
    selector: SELECTOR,
    old: [],
    count: REPLICAS,
    deadlineMs: 180_000,
    intervalMs: 1000,
  });
  return { old, error: null };
}

/** leg-roll rolled (kubectl rollout restart), right after the leg's change started. */
export async function startRoll(ctx: RunContext, roll: Roll | null): Promise<void> {
  if (!roll) return;
  try {
    await kubectlIn(ctx, ["rollout", "restart", "deployment/leg-roll"]);
  } catch (err) {
    if (ctx.replay) throw err;
    roll.error = `kubectl rollout restart deployment/leg-roll failed: ${message(err)}`;
  }
}

/**
 * Once every agent is ready: leg-roll's new Pods, and each node's view of its Service (polled until every node lists
 * exactly them as active, 30 s at most; the last reading is kept). Then leg-roll is deleted.
 */
export async function readRoll(
  ctx: RunContext,
  roll: Roll | null,
  nodes: string[],
): Promise<{ rolled: NonNullable<UpgradeLeg["rolled"]>; evidence: EvidenceItem[] } | null> {
  if (!roll) return null;
  const evidence: EvidenceItem[] = [];
  let rolled: NonNullable<UpgradeLeg["rolled"]> = { backends: [], views: [], error: roll.error };
  if (!roll.error) {
    try {
      const fresh = await waitReplaced(ctx, {
        what: "leg-roll rolled (two new Pods ready)",
        namespace: ctx.namespace,
        selector: SELECTOR,
        old: roll.old,
        count: REPLICAS,
        deadlineMs: 180_000,
        intervalMs: 1000,
      });
      const ip = await clusterIp(ctx, ctx.namespace, "leg-roll");
      const backends = fresh.map((p) => formatEndpoint(p.ip, 8080)).sort();
      const value = await waitViewsAllActive(
        ctx,
        "every node listing leg-roll's new Pods as active",
        nodes,
        ip,
        backends,
      );
      evidence.push(...fresh.flatMap((p) => p.evidence ?? []), ...value.evidence);
      rolled = { backends, views: value.views, error: null };
      ctx.log(
        `leg-roll after the leg: ${value.views.map((v) => `${v.node} [${v.backends.join(", ")}]`).join("; ")}`,
      );
    } catch (err) {
      if (ctx.replay) throw err;
      rolled = { backends: [], views: [], error: `leg-roll not read back: ${message(err)}` };
    }
  }
  await kubectlIn(ctx, ["delete", "deployment,service", "leg-roll", "--ignore-not-found", "--wait=true"]);
  // the Pods go with their Deployment; wait until none is left, so the topics that run next count no extra rules
  await waitSettled(ctx, {
    what: "leg-roll's Pods gone",
    deadlineMs: 60_000,
    intervalMs: 1000,
    probe: () => pods(ctx, ctx.namespace, SELECTOR),
    done: (ps) => ps.length === 0,
    show: (ps) => ps.map((p) => p.name).join(", "),
  });
  return { rolled, evidence };
}
