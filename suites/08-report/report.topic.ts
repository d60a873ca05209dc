/**
 * Topic "report" — The lab, step 8.
 * report.txt: the lab's summary, re-read from the cluster at the end and compared with the earlier topics' records.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { lbList } from "../../helpers/observe/steps.ts";
import { NODE_PORT, WEB_PORT, withWeb } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { LbList, LbService } from "../../helpers/parse/bpf-lb-list.ts";
import { type AgentConfig, parseConfig } from "../../helpers/parse/config.ts";
import type { AgentStatus } from "../../helpers/parse/status.ts";
import { LAB } from "../../helpers/properties/sources.ts";
import { findLbService, lbBackendRows, statusQuote } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordName, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { holderState } from "../04-holder/holder.topic.ts";
import { programState } from "../05-program/program.topic.ts";
import type { ReportRecord } from "./report.records.ts";
import { records } from "./report.records.ts";

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
  records,
  schedule: {
    after: ["iptables", "scale", "holder", "program", "nodeport", "ghost"],
    why: "compares report.txt, re-read from the cluster, with those topics' records (and the holder's live backend)",
  },
  observe: observeReport,
  properties: [
    {
      id: "report.consistent",
      claim: "report.txt, re-read from the current state, agrees with the earlier records",
      source: LAB(8),
      why: "it compares two reads of the same values, whatever they are in this configuration: agreement does not depend on the datapath settings",
      expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
      config: "none",
      needs: ["report", "iptables", "scale", "ct", "prog", "nodeport", "ghost"],
      observe: (r) => {
        const rep = r.get("report");
        // each key of report.txt, its earlier record and that record's field
        const want: [keyof ReportRecord, unknown, RecordName, string, unknown][] = [
          [
            "kube_proxy_replacement",
            rep.kube_proxy_replacement,
            "iptables",
            "kube_proxy_replacement",
            r.get("iptables").kube_proxy_replacement,
          ],
          [
            "socket_lb_coverage",
            rep.socket_lb_coverage,
            "ct",
            "socket_lb_coverage",
            r.get("ct").socket_lb_coverage,
          ],
          ["web_backends", rep.web_backends, "scale", "backends", r.get("scale").backends.length],
          ["holder_backend", rep.holder_backend, "ct", "backend", r.get("ct").backend],
          ["holder_program", rep.holder_program, "prog", "program", r.get("prog").program],
          [
            "nodeport_iptables_lines",
            rep.nodeport_iptables_lines,
            "nodeport",
            "iptables_lines",
            r.get("nodeport").iptables_lines,
          ],
          [
            "ghost_no_backend_response",
            rep.ghost_no_backend_response,
            "ghost",
            "no_backend_response",
            r.get("ghost").no_backend_response,
          ],
        ];
        const fieldEvidence = (name: RecordName, field: string) => r.evidence(name, field as never);
        const differ = want.filter(([, a, , , b]) => a !== b);
        const diff = differ.map(
          ([k, a, name, field, b]) => `${k}: report=${String(a)} ${name}.${field}=${String(b)}`,
        );
        return {
          value: diff,
          evidence:
            differ.length > 0
              ? differ.map(([k, , name, field], i) =>
                  derive(diff[i] as string, fieldEvidence("report", k), fieldEvidence(name, field)),
                )
              : [
                  derive(
                    `all ${want.length} keys of report.txt agree with the earlier records`,
                    want.map(([k]) => fieldEvidence("report", k)),
                  ),
                ],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 8: re-read the current state; compared with the earlier topics' records. */
export async function observeReport(ctx: RunContext): Promise<RecordSet> {
  // web is deployed by the topics before this one; run alone, this topic deploys it (at their 4 replicas)
  const { holder, status, cip, ctRec } = await withWeb(ctx, 4, () => holderState(ctx));
  const { prog } = await programState(ctx, holder);
  const lb = await lbList(ctx, holder.node);
  const config = read(await ciliumDbgRaw(ctx, holder.node, ["config", "-a"]), parseConfig);
  const report = buildReportRecord({
    status,
    lb,
    webLb: findLbService(lb.parsed, formatEndpoint(cip, WEB_PORT)),
    holderBackend: ctRec.record.backend,
    holderBackendEvidence: ctRec.evidence.backend ?? [],
    holderProgram: prog.record.program,
    holderProgramEvidence: prog.evidence.program ?? [],
    iptablesSave: await iptablesSaveRaw(ctx, holder.node),
    nodePort: NODE_PORT,
    config,
  });
  return { ...ctx.earlierRecords(), report };
}

/** Lab step 8: re-read from the current state, never copied from earlier records. */
export function buildReportRecord(input: {
  status: Read<AgentStatus>;
  lb: Read<LbList>;
  webLb: LbService | null;
  holderBackend: string;
  holderBackendEvidence: EvidenceItem[];
  holderProgram: string;
  holderProgramEvidence: EvidenceItem[];
  iptablesSave: RawText;
  nodePort: number;
  config: Read<AgentConfig>;
}): Evidenced<ReportRecord> {
  const port = String(input.nodePort);
  const lines = input.iptablesSave.quotes((l) => l.includes(port));
  const st = input.status;
  const cfg = input.config.parsed;
  return {
    record: {
      kube_proxy_replacement: st.parsed.kubeProxyReplacement ?? "",
      socket_lb_coverage: st.parsed.socketLbCoverage,
      web_backends: input.webLb ? input.webLb.backends.length : 0,
      holder_backend: input.holderBackend,
      holder_program: input.holderProgram,
      nodeport_iptables_lines: lines.length,
      ghost_no_backend_response: cfg.options.ServiceNoBackendResponse ?? "",
    },
    evidence: {
      kube_proxy_replacement: statusQuote(st.raw, st.parsed, "KubeProxyReplacement"),
      socket_lb_coverage: statusQuote(st.raw, st.parsed, "KubeProxyReplacement Details/Socket LB Coverage"),
      web_backends: input.webLb
        ? lbBackendRows(input.lb.raw, input.webLb)
        : [derive("no web frontend in bpf lb list", input.lb.raw)],
      holder_backend: input.holderBackendEvidence,
      holder_program: input.holderProgramEvidence,
      nodeport_iptables_lines:
        lines.length > 0 ? lines : [derive(`no line mentions ${port}`, input.iptablesSave)],
      ghost_no_backend_response:
        cfg.lines.ServiceNoBackendResponse !== undefined
          ? [input.config.raw.quote(cfg.lines.ServiceNoBackendResponse)]
          : [derive("config -a has no ServiceNoBackendResponse", input.config.raw)],
    },
  };
}
