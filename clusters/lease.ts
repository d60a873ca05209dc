import { UserError } from "../helpers/errors.ts";
import type { ExecResult, Executor } from "../helpers/exec/types.ts";

export const LEASE_NAME = "cilium-datapath-conformance";

interface LeaseObject {
  metadata?: { resourceVersion?: string };
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

const kubectl = (k: Executor, argv: string[], stdin?: string): Promise<ExecResult> =>
  k.run({ target: { kind: "kubectl" }, argv, ...(stdin !== undefined ? { stdin } : {}) });

const lastLine = (r: ExecResult) => r.stderr.trim().split("\n").pop() ?? "";

/**
 * Takes the cluster-wide Lease default/cilium-datapath-conformance for this run, so two runs against one
 * cluster cannot collide (node-global checks such as iptables and NodePort listeners would interfere).
 * Atomic: `kubectl create` wins only for the first of two runs; an expired Lease is taken over with
 * `kubectl replace` carrying the resourceVersion that was read, so of two runs that both saw it expired only
 * one succeeds (the other gets a conflict). A Lease held by another run and not yet expired is a one-line
 * error naming the holder. The release deletes the Lease only while this run still holds it.
 */
export async function acquireLease(k: Executor, runId: string, seconds = 3600): Promise<() => Promise<void>> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, ".000000Z");
  const lease = (resourceVersion?: string) =>
    JSON.stringify({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: LEASE_NAME, namespace: "default", ...(resourceVersion ? { resourceVersion } : {}) },
      spec: { holderIdentity: runId, leaseDurationSeconds: seconds, acquireTime: now, renewTime: now },
    });
  const release = async () => {
    const held = await read(k);
    if (held?.spec?.holderIdentity !== runId) return;
    await kubectl(k, ["-n", "default", "delete", "lease", LEASE_NAME, "--ignore-not-found"]);
  };
  const created = await kubectl(k, ["create", "-f", "-"], lease());
  if (created.exitCode === 0) return release;
  if (!/AlreadyExists|already exists/.test(created.stderr))
    throw new UserError(`could not take Lease default/${LEASE_NAME}: ${lastLine(created)}`);
  const held = await read(k);
  const spec = held?.spec ?? {};
  const until = Date.parse(spec.renewTime ?? "") + (spec.leaseDurationSeconds ?? 0) * 1000;
  if (spec.holderIdentity !== runId && until > Date.now()) {
    throw new UserError(
      `another run (${spec.holderIdentity}) holds Lease default/${LEASE_NAME} until ${new Date(until).toISOString()}; wait for it or delete the Lease if that run is gone`,
    );
  }
  const replaced = await kubectl(k, ["replace", "-f", "-"], lease(held?.metadata?.resourceVersion));
  if (replaced.exitCode !== 0) {
    const why = /Conflict|has been modified/.test(replaced.stderr)
      ? "another run took it over at the same moment"
      : lastLine(replaced);
    throw new UserError(`could not take Lease default/${LEASE_NAME}: ${why}`);
  }
  return release;
}

async function read(k: Executor): Promise<LeaseObject | null> {
  const r = await kubectl(k, ["-n", "default", "get", "lease", LEASE_NAME, "-o", "json"]);
  if (r.exitCode !== 0) return null;
  return JSON.parse(r.stdout) as LeaseObject;
}

/** A run id as a DNS-1123 label fragment: lower case, [a-z0-9-], at most `max` characters, no dash at either end. */
export function dnsLabel(id: string, max = 63): string {
  const s = id
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, max)
    .replace(/^-+|-+$/g, "");
  return s || "run";
}
