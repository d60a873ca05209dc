/**
 * What a run might leave behind, listed — and compared with an earlier listing by name.
 *
 *   npm run leftovers -- [--context CTX] [--no-host] [--json] [--save FILE] [--before FILE] [--expect-kept CLUSTER]
 *   npm run leftovers -- objects --context CTX [--save FILE] [--before FILE] [--json]
 *
 * The first form lists the inventory (clusters/leftovers.ts): with --context the cluster's run namespaces,
 * node-shell Pods, the Lease and Cilium's objects for the run's Pods; unless --no-host this machine's kind
 * clusters, containers, networks, the kernel tests' network namespaces and BPF pins. --before compares with a
 * saved listing and exits 1 when something of the suite's is new (a kept cluster named by --expect-kept is
 * expected). The `objects` form snapshots every listable object of the cluster by name (clusters/objects.ts)
 * and, with --before, classifies each difference and exits 1 unless the comparison is clean.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import {
  collectInventory,
  diffInventories,
  formatDiff,
  formatInventory,
  type Inventory,
} from "../clusters/leftovers.ts";
import {
  compareObjects,
  formatComparison,
  type ObjectSnapshot,
  snapshotObjects,
} from "../clusters/objects.ts";
import { UserError } from "../helpers/errors.ts";
import { LocalExecutor } from "../helpers/exec/local.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { scriptArgs } from "./args.ts";

export interface LeftoversIo {
  out(s: string): void;
  err(s: string): void;
  exec: Executor;
  now?: () => Date;
}

function readJson<T>(file: string, what: string): T {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UserError(
      `--before ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UserError(`--before ${file}: not ${what} saved by this tool (not JSON)`);
  }
}

const str = (v: string | boolean | undefined): string | undefined => (typeof v === "string" ? v : undefined);

export async function leftovers(argv: string[], io: LeftoversIo): Promise<number> {
  const { positional, flags } = scriptArgs(
    argv,
    ["context", "save", "before", "expect-kept"],
    ["json", "no-host"],
  );
  const [sub, ...rest] = positional;
  if (rest.length > 0 || (sub !== undefined && sub !== "objects"))
    throw new UserError(
      `unexpected ${JSON.stringify(positional.join(" "))}: the only subcommand is \`objects\``,
    );
  const context = str(flags.context);
  const save = str(flags.save);
  const before = str(flags.before);
  const kept = str(flags["expect-kept"]);

  if (sub === "objects") {
    if (!context) throw new UserError("objects: which cluster? --context CTX (kubectl config get-contexts)");
    const snap = await snapshotObjects(io.exec, context, io.now);
    if (save) writeFileSync(save, `${JSON.stringify(snap)}\n`);
    io.err(
      `${snap.objects.length} objects of ${snap.resources.length} resource types in ${context}${save ? `, saved to ${save}` : ""}\n`,
    );
    for (const n of snap.notes) io.err(`  (not read: ${n})\n`);
    if (!before) {
      if (flags.json) io.out(`${JSON.stringify(snap, null, 2)}\n`);
      return 0;
    }
    const b = readJson<ObjectSnapshot>(before, "an object snapshot");
    if (!Array.isArray(b.objects))
      throw new UserError(`--before ${before}: not an object snapshot (no objects)`);
    const c = compareObjects(b, snap);
    io.out(flags.json ? `${JSON.stringify(c, null, 2)}\n` : formatComparison(c));
    return c.clean ? 0 : 1;
  }

  const inv = await collectInventory({
    exec: io.exec,
    ...(context ? { context } : {}),
    host: !flags["no-host"],
    ...(io.now ? { now: io.now } : {}),
  });
  if (save) writeFileSync(save, `${JSON.stringify(inv)}\n`);
  if (!before) {
    io.out(flags.json ? `${JSON.stringify(inv, null, 2)}\n` : formatInventory(inv));
    return 0;
  }
  const b = readJson<Inventory>(before, "an inventory");
  if (!Array.isArray(b.items)) throw new UserError(`--before ${before}: not an inventory (no items)`);
  // KEEP_CLUSTER=1: the kept cluster, its nodes and what lives in it are expected — but never the Lease
  const d = diffInventories(
    b,
    inv,
    (i) => kept !== undefined && i.kind !== "Lease" && (i.where === "cluster" || i.name.startsWith(kept)),
  );
  io.out(flags.json ? `${JSON.stringify(d, null, 2)}\n` : formatDiff(d));
  return d.oursLeft.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const io: LeftoversIo = {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    exec: new LocalExecutor(),
  };
  leftovers(process.argv.slice(2), io)
    .then((code) => {
      process.exitCode = code;
    })
    .catch((err: unknown) => {
      if (err instanceof UserError) {
        process.stderr.write(`leftovers: ${err.message}\n`);
        process.exitCode = err.exitCode;
        return;
      }
      throw err;
    });
}
