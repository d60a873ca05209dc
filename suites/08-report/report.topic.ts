/**
 * Topic "report" — The lab, step 8.
 * report.txt: the lab's summary, re-read from the cluster at the end and compared with the earlier topics' records.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbg } from "../../helpers/observe/agent.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSave } from "../../helpers/observe/node.ts";
import { lbList } from "../../helpers/observe/steps.ts";
import { NODE_PORT, WEB_PORT } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { LbService } from "../../helpers/parse/bpf-lb-list.ts";
import { type AgentConfig, parseConfig } from "../../helpers/parse/config.ts";
import { linesContaining } from "../../helpers/parse/iptables-save.ts";
import type { AgentStatus } from "../../helpers/parse/status.ts";
import { LAB } from "../../helpers/properties/sources.ts";
import { findLbService, lbRow } from "../../helpers/records/common.ts";
import type { Evidenced, RecordSet, ReportRecord } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { holderState } from "../04-holder/holder.topic.ts";
import { programState } from "../05-program/program.topic.ts";

export const topic = defineTopic({
  name: "report",
  title:
    "report.txt: the lab's summary, re-read from the cluster at the end and compared with the earlier topics' records",
  source: LAB(8),
  deploys: ["holder.yaml"],
  steps: [
    { on: "kubectl", run: "-n <ns> logs holder", for: "the holder's connection" },
    { on: "pod", run: "netstat -tn", for: "the holder's peer" },
    { on: "agent", run: "cilium-dbg bpf ct list global", for: "conntrack" },
    { on: "agent", run: "cilium-dbg status --verbose", for: "socket LB, attach mode" },
    { on: "agent", run: "cilium-dbg endpoint get <id> -o json", for: "the holder's endpoint" },
    { on: "agent", run: "bpftool net show dev <dev>", for: "its programs" },
    { on: "node", run: "tc filter show dev <dev> ingress", for: "tc filters" },
    { on: "agent", run: "cilium-dbg map list", for: "the policy map" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "web's slots" },
    { on: "agent", run: "cilium-dbg config -a", for: "the agent's configuration" },
    { on: "node", run: "iptables-save", for: "kube-proxy's rules" },
  ],
  builds: ["report"],
  observe: observeReport,
  properties: [
    {
      id: "report.consistent",
      claim: "report.txt, re-read from the current state, agrees with the earlier records",
      source: LAB(8),
      expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
      needs: ["report", "iptables", "scale", "ct", "prog", "nodeport", "ghost"],
      observe: (r) => {
        const rep = r.get("report");
        const want: [string, unknown, unknown][] = [
          ["kube_proxy_replacement", rep.kube_proxy_replacement, r.get("iptables").kube_proxy_replacement],
          ["socket_lb_coverage", rep.socket_lb_coverage, r.get("ct").socket_lb_coverage],
          ["web_backends", rep.web_backends, r.get("scale").backends.length],
          ["holder_backend", rep.holder_backend, r.get("ct").backend],
          ["holder_program", rep.holder_program, r.get("prog").program],
          ["nodeport_iptables_lines", rep.nodeport_iptables_lines, r.get("nodeport").iptables_lines],
          ["ghost_no_backend_response", rep.ghost_no_backend_response, r.get("ghost").no_backend_response],
        ];
        const diff = want
          .filter(([, a, b]) => a !== b)
          .map(([k, a, b]) => `${k}: report=${String(a)} record=${String(b)}`);
        return { value: diff, evidence: diff };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 8: re-read the current state; compared with the earlier topics' records. */
export async function observeReport(ctx: RunContext): Promise<RecordSet> {
  const { holder, status, cip, ctRec } = await holderState(ctx);
  const { prog } = await programState(ctx, holder);
  const lb = await lbList(ctx, holder.node);
  const config = parseConfig(await ciliumDbg(ctx, holder.node, ["config", "-a"]));
  const report = buildReportRecord({
    status,
    webLb: findLbService(lb, formatEndpoint(cip, WEB_PORT)),
    holderBackend: ctRec.record.backend,
    holderProgram: prog.record.program,
    iptablesSave: await iptablesSave(ctx, holder.node),
    nodePort: NODE_PORT,
    config,
  });
  return { ...ctx.earlierRecords(), report };
}

/** Lab step 8: re-read from the current state, never copied from earlier records. */
export function buildReportRecord(input: {
  status: AgentStatus;
  webLb: LbService | null;
  holderBackend: string;
  holderProgram: string;
  iptablesSave: string;
  nodePort: number;
  config: AgentConfig;
}): Evidenced<ReportRecord> {
  const lines = linesContaining(input.iptablesSave, String(input.nodePort));
  return {
    record: {
      kube_proxy_replacement: input.status.kubeProxyReplacement ?? "",
      socket_lb_coverage: input.status.socketLbCoverage,
      web_backends: input.webLb ? input.webLb.backends.length : 0,
      holder_backend: input.holderBackend,
      holder_program: input.holderProgram,
      nodeport_iptables_lines: lines.length,
      ghost_no_backend_response: input.config.options.ServiceNoBackendResponse ?? "",
    },
    evidence: {
      nodeport_iptables_lines: lines,
      web_backends: input.webLb
        ? input.webLb.backends.map((b) => lbRow(input.webLb as LbService, b.slot))
        : [],
    },
  };
}
