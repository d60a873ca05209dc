/**
 * `npm run bundles`: (re)writes the HAND-MADE bundles in results/hand-made/{kpr,kube-proxy} (or BUNDLE_OUT) by driving the
 * real observers against the scripted cluster (scripted-cluster.ts) through the recording executor.
 * Replace them with recorded bundles from a real run (`results/<run-id>/<mode>`) when one is available.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRecords } from "../../helpers/bundle/read.ts";
import { writeMeta, writeRecords } from "../../helpers/bundle/write.ts";
import { RecordingExecutor } from "../../helpers/exec/record.ts";
import type { Executor } from "../../helpers/exec/types.ts";
import { nothingSpent, type RunContext, type UpgradePlan } from "../../helpers/observe/context.ts";
import { MODES, type Mode } from "../../helpers/properties/expectation.ts";
import { RECORDS, TOPICS } from "../../suites/topics.ts";
import { scenario } from "./scenario.ts";
import { ScriptedCluster } from "./scripted-cluster.ts";

// never suites/bundles: the shipped bundles are recorded on a real cluster and outrank these
const ROOT = process.env.BUNDLE_OUT ?? join(import.meta.dirname, "..", "..", "results", "hand-made");

const CREATED_AT = "2026-12-02T09:00:00.000Z";

export const HAND_MADE =
  "hand-made: written by us with scripts/bundle-maker in the output formats of the printers in Cilium's source (cilium-dbg/cmd, pkg/client, pkg/maps/ctmap), bpftool, tc and iptables-save; addresses and names are illustrative, not captured from a cluster";

export async function makeBundle(mode: Mode, dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  const s = scenario(mode);
  const cluster = new ScriptedCluster(s);
  const kubeContext = `kind-${s.cluster}`;
  // no upgrade leg: upgrades under load are recorded on real clusters (suites/bundles/upgrade-*), and the
  // scripted cluster does not play the traffic the upgrade topic holds across one
  const upgrade: UpgradePlan | undefined = undefined;
  writeMeta(dir, {
    format: 1,
    mode,
    cilium: s.cilium,
    ciliumMinor: s.ciliumMinor,
    kubernetes: s.kubernetes,
    kernel: s.kernel,
    attachMode: "TCX",
    provider: "kind (scripted)",
    origin: HAND_MADE,
    runId: `hand-made-${mode}`,
    createdAt: CREATED_AT,
    phases: {},
    kubeContext,
    ...(upgrade ? { upgrade } : {}),
  });
  // simulated time: each scripted call takes its scripted duration, each wait its requested time
  let t = Date.parse(CREATED_AT);
  const timed: Executor = {
    run: async (req) => {
      const r = await cluster.run(req);
      t += r.durationMs;
      return r;
    },
  };
  for (const { name: topic, observe } of TOPICS) {
    if (topic === "upgrade" && !upgrade) continue;
    const ctx: RunContext = {
      exec: new RecordingExecutor(timed, dir, topic, () => t),
      now: () => t,
      recordedAt: () => t,
      spent: nothingSpent,
      mode,
      ciliumMinor: s.ciliumMinor,
      namespace: "cca-dp",
      replay: true,
      log: () => {},
      sleep: async (ms: number) => {
        t += ms;
      },
      runStartedAt: CREATED_AT,
      kubeContext,
      ...(upgrade ? { upgrade } : {}),
      earlierRecords: () => readRecords(dir, RECORDS),
    };
    writeRecords(dir, await observe(ctx), RECORDS);
  }
  writeFileSync(
    join(dir, "README.md"),
    `# Hand-made bundle (${mode})\n\n${HAND_MADE}.\n\nCilium ${s.cilium}, Kubernetes ${s.kubernetes}, kernel ${s.kernel}, kind 1 control-plane + 2 workers, tunnel/vxlan, TCX.\nRegenerate with \`npm run bundles\`; replay with \`CLUSTER_PROVIDER=replay BUNDLE=results/hand-made/${mode} npm run test:conformance\`.\n`,
  );
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  for (const mode of MODES) {
    await makeBundle(mode, join(ROOT, mode));
    process.stdout.write(`wrote ${join(ROOT, mode)}\n`);
  }
}
