import { UserError } from "../helpers/errors.ts";
import type { ExecResult, Executor } from "../helpers/exec/types.ts";

export const LEASE_NAME = "cilium-datapath-conformance";
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/default/leases/${LEASE_NAME}`;

/**
 * How long a Lease holds without renewal: a run renews it every third of this, so a run that died without
 * releasing it (SIGKILL, a lost machine) blocks the next run for at most this long.
 */
export const LEASE_DURATION_S = 600;
/** Between two attempts while waiting for another run's Lease (LEASE_WAIT_S). */
export const LEASE_POLL_MS = 5000;

interface LeaseObject {
  metadata?: { resourceVersion?: string; uid?: string };
  spec?: { holderIdentity?: string; renewTime?: string; acquireTime?: string; leaseDurationSeconds?: number };
}

export interface LeaseOptions {
  /** leaseDurationSeconds (default LEASE_DURATION_S). */
  seconds?: number;
  /**
   * How long to wait for another run to release the Lease (LEASE_WAIT_S); 0 (the default) fails at once with
   * one line naming the holder.
   */
  waitMs?: number;
  pollMs?: number;
  /** Renews renewTime this often while held (default a third of the duration); 0 turns renewal off. */
  renewEveryMs?: number;
  log?(line: string): void;
  sleep?(ms: number): Promise<void>;
  now?(): number;
}

/** Releases the Lease (renewal stops first); safe to call twice. */
export type Release = () => Promise<void>;

const kubectl = (k: Executor, argv: string[], stdin?: string): Promise<ExecResult> =>
  k.run({ target: { kind: "kubectl" }, argv, ...(stdin !== undefined ? { stdin } : {}) });

const lastLine = (r: ExecResult) => r.stderr.trim().split("\n").pop() ?? "";

/** LEASE_WAIT_S as milliseconds: a whole number of seconds ≥ 0, or one line saying what is valid. */
export function leaseWaitMs(v: string | undefined): number {
  if (v === undefined || v === "") return 0;
  if (!/^\d+$/.test(v))
    throw new UserError(
      `LEASE_WAIT_S=${v}: give the seconds to wait for another run's Lease (0 fails at once, naming the holder)`,
    );
  return Number(v) * 1000;
}

type Attempt = { taken: true } | { taken: false; holder: string; until: number; why: string };

/**
 * Takes the cluster-wide Lease default/cilium-datapath-conformance for this run, so two runs against one
 * cluster cannot collide (node-global checks such as iptables and NodePort listeners would interfere).
 *
 * - Atomic: `kubectl create` wins only for the first of two runs; an expired Lease is taken over with
 *   `kubectl replace` carrying the resourceVersion that was read, so of two runs that both saw it expired
 *   only one succeeds (the other gets a conflict and counts as refused).
 * - A Lease another run holds: with `waitMs` 0 a one-line error naming the holder and until when; otherwise
 *   the attempt repeats every `pollMs`, saying who it waits for, until the Lease is free or `waitMs` is up.
 * - Held: renewed (renewTime) every `renewEveryMs` with the resourceVersion read, so it never expires under
 *   a live run and a run that died frees it within `seconds`.
 * - The release deletes the Lease only while this run still holds it, with a precondition on its uid and
 *   resourceVersion (`kubectl delete --raw` with DeleteOptions), so a Lease another run took over between the
 *   read and the delete is never deleted.
 */
export async function acquireLease(
  k: Executor,
  runId: string,
  opts: LeaseOptions | number = {},
): Promise<Release> {
  const o: LeaseOptions = typeof opts === "number" ? { seconds: opts } : opts;
  const seconds = o.seconds ?? LEASE_DURATION_S;
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const log = o.log ?? (() => {});
  const waitMs = o.waitMs ?? 0;
  const stamp = () => new Date(now()).toISOString().replace(/\.\d+Z$/, ".000000Z");
  const lease = (resourceVersion?: string, acquireTime = stamp()) =>
    JSON.stringify({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: LEASE_NAME, namespace: "default", ...(resourceVersion ? { resourceVersion } : {}) },
      spec: { holderIdentity: runId, leaseDurationSeconds: seconds, acquireTime, renewTime: stamp() },
    });

  const attempt = async (): Promise<Attempt> => {
    const created = await kubectl(k, ["create", "-f", "-"], lease());
    if (created.exitCode === 0) return { taken: true };
    if (!/AlreadyExists|already exists/.test(created.stderr))
      throw new UserError(`could not take Lease default/${LEASE_NAME}: ${lastLine(created)}`);
    const held = await readOrFail(k);
    if (held === "unreadable")
      throw new UserError(`could not read Lease default/${LEASE_NAME} after it said it exists`);
    // deleted between our create and our read: try again at once
    if (!held) return { taken: false, holder: "(released just now)", until: now(), why: "released just now" };
    const spec = held.spec ?? {};
    const until = Date.parse(spec.renewTime ?? "") + (spec.leaseDurationSeconds ?? 0) * 1000;
    if (spec.holderIdentity !== runId && until > now())
      return { taken: false, holder: spec.holderIdentity ?? "(no holder)", until, why: "held" };
    const replaced = await kubectl(k, ["replace", "-f", "-"], lease(held.metadata?.resourceVersion));
    if (replaced.exitCode === 0) return { taken: true };
    if (/Conflict|has been modified/.test(replaced.stderr))
      return {
        taken: false,
        holder: "(another run, at the same moment)",
        until: now() + seconds * 1000,
        why: "another run took it over at the same moment",
      };
    throw new UserError(`could not take Lease default/${LEASE_NAME}: ${lastLine(replaced)}`);
  };

  const started = now();
  let lastSaid = Number.NEGATIVE_INFINITY;
  for (;;) {
    const a = await attempt();
    if (a.taken) break;
    if (a.why === "released just now") continue;
    const waited = now() - started;
    const until = Number.isFinite(a.until) ? new Date(a.until).toISOString() : "an unknown time";
    if (waited >= waitMs) {
      const because =
        a.why === "held"
          ? `another run (${a.holder}) holds Lease default/${LEASE_NAME} until ${until}`
          : a.why;
      throw new UserError(
        waitMs > 0
          ? `${because}; waited ${Math.round(waited / 1000)} s (LEASE_WAIT_S=${Math.round(waitMs / 1000)}); delete the Lease if that run is gone`
          : `${because}; wait for it (LEASE_WAIT_S=<seconds> waits) or delete the Lease if that run is gone`,
      );
    }
    if (now() - lastSaid >= 30_000) {
      lastSaid = now();
      log(
        `waiting for run ${a.holder} to release Lease default/${LEASE_NAME} (held until ${until}; ${Math.round(waited / 1000)} s of LEASE_WAIT_S=${Math.round(waitMs / 1000)} s)`,
      );
    }
    await sleep(Math.min(o.pollMs ?? LEASE_POLL_MS, Math.max(0, waitMs - waited)));
  }
  if (now() - started > 1000)
    log(`took Lease default/${LEASE_NAME} after ${Math.round((now() - started) / 1000)} s`);

  const renewEvery = o.renewEveryMs ?? (seconds * 1000) / 3;
  let renewing: Promise<void> = Promise.resolve();
  const timer =
    renewEvery > 0
      ? setInterval(() => {
          renewing = renewing.then(() => renew()).catch(() => {});
        }, renewEvery)
      : undefined;
  timer?.unref();
  const renew = async (): Promise<void> => {
    const got = await readOrFail(k);
    // the API server does not answer: the next tick tries again (the Lease outlives two missed renewals)
    if (got === "unreadable") return;
    if (got?.spec?.holderIdentity !== runId) {
      log(
        `warning: Lease default/${LEASE_NAME} is now held by ${got?.spec?.holderIdentity ?? "nobody"}, not this run`,
      );
      return;
    }
    await kubectl(k, ["replace", "-f", "-"], lease(got.metadata?.resourceVersion, got.spec?.acquireTime));
  };

  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (timer) clearInterval(timer);
    await renewing;
    // an API server that is restarting gets three tries, 2 s apart, before the Lease is left to expire
    let held: LeaseObject | null | "unreadable" = "unreadable";
    // (a plain timer: the waiting sleep may be one an interrupt has ended, and the release runs after it)
    for (let i = 0; i < 3 && held === "unreadable"; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 2000));
      held = await readOrFail(k);
    }
    if (held === "unreadable") {
      log(
        `could not read Lease default/${LEASE_NAME} to release it: it expires by itself within ${seconds} s`,
      );
      return;
    }
    if (held?.spec?.holderIdentity !== runId) return;
    const r = await kubectl(
      k,
      ["delete", "--raw", LEASE_PATH, "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: held.metadata?.uid, resourceVersion: held.metadata?.resourceVersion },
      }),
    );
    if (r.exitCode !== 0 && !/NotFound|not found/.test(r.stderr))
      log(
        /Conflict|Precondition failed/.test(r.stderr)
          ? `Lease default/${LEASE_NAME} changed hands before the release: left to its new holder`
          : `could not release Lease default/${LEASE_NAME}: ${lastLine(r)}`,
      );
  };
}

/** The Lease, null when there is none, "unreadable" when the API server did not say. */
/**
 * A run started by the run that holds the Lease (the upgrade's every-topic-again after a leg, on its cluster):
 * it runs under its caller's Lease, neither taking nor releasing it. Refused when another run holds it.
 */
export async function joinLease(k: Executor, holder: string): Promise<Release> {
  const held = await readOrFail(k);
  const now = held === "unreadable" || held === null ? null : held.spec?.holderIdentity;
  if (now !== holder)
    throw new UserError(
      `CONFORMANCE_LEASE_HELD_BY=${holder}: Lease default/${LEASE_NAME} is ${held === "unreadable" ? "unreadable" : held === null ? "not held" : `held by ${now ?? "nobody"}`}, not by that run`,
    );
  return async () => {};
}

async function readOrFail(k: Executor): Promise<LeaseObject | null | "unreadable"> {
  const r = await kubectl(k, ["-n", "default", "get", "lease", LEASE_NAME, "-o", "json"]);
  if (r.exitCode !== 0) return /NotFound|not found/.test(r.stderr) ? null : "unreadable";
  try {
    return JSON.parse(r.stdout) as LeaseObject;
  } catch {
    return "unreadable";
  }
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
