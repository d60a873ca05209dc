import { UserError } from "../helpers/errors.ts";
import type { Executor } from "../helpers/exec/types.ts";

export const LEASE_NAME = "cilium-datapath-conformance";

/**
 * Takes the cluster-wide Lease default/cilium-datapath-conformance for this run, so two runs against one
 * cluster cannot collide (node-global checks such as iptables and NodePort listeners would interfere).
 * A Lease held by another run and not yet expired is a one-line error naming the holder.
 */
export async function acquireLease(
  kubectl: Executor,
  runId: string,
  seconds = 3600,
): Promise<() => Promise<void>> {
  const get = await kubectl.run({
    target: { kind: "kubectl" },
    argv: ["-n", "default", "get", "lease", LEASE_NAME, "-o", "json"],
  });
  if (get.exitCode === 0) {
    const spec =
      (
        JSON.parse(get.stdout) as {
          spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
        }
      ).spec ?? {};
    const until = Date.parse(spec.renewTime ?? "") + (spec.leaseDurationSeconds ?? 0) * 1000;
    if (spec.holderIdentity !== runId && until > Date.now()) {
      throw new UserError(
        `another run (${spec.holderIdentity}) holds Lease default/${LEASE_NAME} until ${new Date(until).toISOString()}; wait for it or delete the Lease if that run is gone`,
      );
    }
  }
  const now = new Date().toISOString().replace(/\.\d+Z$/, ".000000Z");
  const lease = {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: LEASE_NAME, namespace: "default" },
    spec: { holderIdentity: runId, leaseDurationSeconds: seconds, acquireTime: now, renewTime: now },
  };
  const put = await kubectl.run({
    target: { kind: "kubectl" },
    argv: ["apply", "-f", "-"],
    stdin: JSON.stringify(lease),
  });
  if (put.exitCode !== 0)
    throw new UserError(`could not take Lease default/${LEASE_NAME}: ${put.stderr.trim().split("\n").pop()}`);
  return async () => {
    await kubectl.run({
      target: { kind: "kubectl" },
      argv: ["-n", "default", "delete", "lease", LEASE_NAME, "--ignore-not-found"],
    });
  };
}
