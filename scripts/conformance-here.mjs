/**
 * Every topic again, on the cluster a run is using, into a bundle of its own: what the upgrade topic runs after
 * each leg (issue 24: an upgrade ends in full conformance on the upgraded cluster, not a fresh install).
 *
 *   node scripts/conformance-here.mjs OUT_DIR MODE LABEL CONTEXT
 *
 * It runs this checkout's conformance project with the existing provider against kubectl context CONTEXT (a
 * kubeconfig holding only it), in mode MODE, as run LABEL (its namespace cca-dp-LABEL), and moves the bundle it
 * writes to OUT_DIR. What the calling run set for itself (the upgrade, the kind provider, its run id, a kept
 * cluster, a profile, a version) is not passed on: the existing provider reads the cluster as it is.
 *
 * Standard output (what the calling topic records, one line each): `bundle LABEL exit CODE`, then one JSON line
 * per verdict of the nested run ({id, status, expected, observed, reason?, upstream?}). The nested run's own
 * output goes to standard error. Exit 0 when the nested run left a bundle (whatever its verdicts), 1 when not.
 * Plain JavaScript: it runs under node without a build step.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The calling run's settings that describe itself, never the nested run. */
const NOT_PASSED_ON = [
  "UPGRADE_TO",
  "ROLLBACK",
  "KEEP_CLUSTER",
  "CILIUM_VERSION",
  "DATAPATH_PROFILE",
  "CILIUM_VALUES",
  "CONFORMANCE_JUNIT",
  "BUNDLE",
  "NO_BACKEND_RESPONSE",
  "PRELOAD_IMAGES",
  "MODES_CONCURRENT",
  "CONFORMANCE_LEASE_HELD_BY",
  "VITEST_POOL_ID",
  "VITEST_WORKER_ID",
  "VITEST",
  "TEST",
  "NODE_ENV",
];

/** The nested run's environment: the existing provider, this mode and label, results under `results`. */
export function nestedEnv(env, o) {
  const out = { ...env };
  for (const k of NOT_PASSED_ON) delete out[k];
  for (const k of Object.keys(out)) if (k.startsWith("VITEST_")) delete out[k];
  return {
    ...out,
    CLUSTER_PROVIDER: "existing",
    CONFORMANCE_EXISTING_OK: "1",
    CONFORMANCE_MODE: o.mode,
    RUN_ID: o.label,
    KUBECONFIG: o.kubeconfig,
    CONFORMANCE_RESULTS: o.results,
    ...(o.outside ? { OUTSIDE_CONTAINER: o.outside } : {}),
  };
}

/** The label the calling run's client outside the nodes carries, its value the cluster's name (clusters/leftovers.ts). */
const OUTSIDE_LABEL = "cilium-datapath-conformance/outside-client";

/**
 * The calling run's client outside the nodes, from `docker ps` lines `<name> <label value>`: the container whose
 * label names the context's cluster (`kind-<cluster>`, `k3d-<cluster>`), so the nested run probes from outside as
 * the fresh install did (issue 42: a property judged fresh is judged after each leg). Null when there is none.
 */
export function outsideOf(psLines, context) {
  const cluster = context.replace(/^(?:kind|k3d)-/, "");
  for (const line of psLines.split("\n")) {
    const [name, value] = line.trim().split(/\s+/);
    if (name && value === cluster) return name;
  }
  return null;
}

/** verdicts.jsonl → one compact JSON line per verdict (what the upgrade record keeps of the nested run). */
export function summaryLines(verdictsText) {
  const lines = [];
  for (const line of verdictsText.split("\n")) {
    if (!line.trim()) continue;
    let v;
    try {
      v = JSON.parse(line);
    } catch {
      lines.push(
        JSON.stringify({ id: "(unreadable verdict line)", status: "fail", raw: line.slice(0, 200) }),
      );
      continue;
    }
    const compact = {
      id: String(v.id),
      status: String(v.status),
      expected: String(v.expected ?? ""),
      observed: String(v.observed ?? ""),
    };
    if (v.reason) compact.reason = String(v.reason);
    if (v.deviation?.upstream) compact.upstream = String(v.deviation.upstream);
    lines.push(JSON.stringify(compact));
  }
  return lines;
}

function usage(why) {
  process.stderr.write(
    `conformance-here: ${why}\nusage: node scripts/conformance-here.mjs OUT_DIR MODE LABEL CONTEXT\n`,
  );
  process.exit(2);
}

async function main(argv) {
  const [outDir, mode, label, context] = argv;
  if (!outDir || !mode || !label || !context) usage("four arguments needed");
  if (mode !== "kpr" && mode !== "kube-proxy")
    usage(`unknown mode ${JSON.stringify(mode)} (kpr or kube-proxy)`);
  if (!/^[a-z0-9-]+$/.test(label))
    usage(`label ${JSON.stringify(label)}: lowercase letters, digits and dashes`);
  if (existsSync(outDir)) usage(`${outDir} exists: a nested run never writes over a bundle`);
  const work = mkdtempSync(join(tmpdir(), "dpc-here-"));
  try {
    const view = spawnSync("kubectl", ["config", "view", "--minify", "--flatten", "--context", context], {
      encoding: "utf8",
    });
    if (view.status !== 0) {
      process.stderr.write(
        `conformance-here: kubectl config view --context ${context} failed: ${view.stderr}`,
      );
      process.stdout.write(`bundle ${label} exit none (no kubeconfig for context ${context})\n`);
      return 1;
    }
    const kubeconfig = join(work, "kubeconfig");
    writeFileSync(kubeconfig, view.stdout, { mode: 0o600 });
    // the calling run holds the cluster's Lease for its whole run: the nested run shares it (clusters/lease.ts)
    const lease = spawnSync(
      "kubectl",
      [
        "--kubeconfig",
        kubeconfig,
        "-n",
        "default",
        "get",
        "lease",
        "cilium-datapath-conformance",
        "-o",
        "jsonpath={.spec.holderIdentity}",
        "--ignore-not-found",
      ],
      { encoding: "utf8" },
    );
    const holder = lease.status === 0 ? lease.stdout.trim() : "";
    const ps = spawnSync(
      "docker",
      ["ps", "--filter", `label=${OUTSIDE_LABEL}`, "--format", `{{.Names}} {{.Label "${OUTSIDE_LABEL}"}}`],
      { encoding: "utf8" },
    );
    const outside = ps.status === 0 ? outsideOf(ps.stdout, context) : null;
    process.stderr.write(
      `conformance-here: the client outside the nodes: ${outside ?? "none found (its properties are skipped)"}\n`,
    );
    const results = join(work, "results");
    const vitest = join(ROOT, "node_modules", "vitest", "vitest.mjs");
    const child = spawn(process.execPath, [vitest, "run", "--project", "conformance"], {
      cwd: ROOT,
      env: {
        ...nestedEnv(process.env, { mode, label, kubeconfig, results, outside }),
        ...(holder ? { CONFORMANCE_LEASE_HELD_BY: holder } : {}),
      },
      stdio: ["ignore", process.stderr, process.stderr],
    });
    const code = await new Promise((res) => child.on("close", (c) => res(c)));
    const bundle = join(results, label, mode);
    if (!existsSync(join(bundle, "bundle.json"))) {
      process.stdout.write(`bundle ${label} exit ${code} (the nested run left no bundle)\n`);
      return 1;
    }
    cpSync(bundle, outDir, { recursive: true });
    const verdicts = join(outDir, "verdicts.jsonl");
    const text = existsSync(verdicts) ? readFileSync(verdicts, "utf8") : "";
    process.stdout.write(`bundle ${label} exit ${code}\n`);
    for (const l of summaryLines(text)) process.stdout.write(`${l}\n`);
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
