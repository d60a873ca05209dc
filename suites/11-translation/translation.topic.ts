/**
 * Topic "translation" — The notebook, §6.
 * Who translates a DNS query to kube-dns: kube-proxy's counters move for the host's queries, not for the Pod's.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import type { RunContext } from "../../helpers/observe/context.ts";
import { hostDnsScript } from "../../helpers/observe/dns.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { clientAndRemote, DNS_NAME } from "../../helpers/observe/workloads.ts";
import {
  allRules,
  type IptablesRule,
  type IptablesSave,
  parseIptablesSave,
} from "../../helpers/parse/iptables-save.ts";
import { u64Compare, u64Diff } from "../../helpers/parse/u64.ts";
import { NB } from "../../helpers/properties/sources.ts";
import { derive, type EvidenceItem, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { TranslationRecord } from "./translation.records.ts";
import { records } from "./translation.records.ts";

export const topic = defineTopic({
  name: "translation",
  title:
    "Who translates a DNS query to kube-dns: kube-proxy's counters move for the host's queries, not for the Pod's",
  source: NB("§6"),
  deploys: ["dns-client.yaml"],
  steps: [
    { on: "node", run: "iptables-save -c -t nat", for: "kube-proxy's counters before and after" },
    { on: "node", run: "bash -c exec 3<>/dev/udp/<ip>/53", for: "ten queries from the host namespace" },
    {
      on: "pod",
      run: "nslookup kubernetes.default.svc.cluster.local <ip>",
      for: "five queries from the client Pod",
    },
  ],
  records,
  schedule: {
    after: [
      "program",
      "host-routing",
      "nodeport",
      "loadbalancer",
      "external-ip",
      "traffic-policy",
      "session-affinity",
      "host-network",
      "lifecycle",
      "lifecycle-ports",
      "ghost",
    ],
    why: "its host-namespace queries are host connections program's reverse socket map must not see; only it sends host traffic to kube-dns, so its counter windows are its own (Pods' queries beside it are translated in eBPF); dns-client after host-routing made it. Beside kube-proxy it counts the kube-dns rule's packets in the nat table, which kube-proxy rewrites (counters reset) whenever a Service or its endpoints change: it follows every topic that adds Services or moves web's backends, ghost's Service too (dual-stack beside kube-proxy, a lab run with the surface topics beside it counted +9 for 10 answered queries, another beside ghost +4; neither is shipped)",
  },
  shared: {
    counts: ["host dns traffic", "kube-proxy service rules", "web backends"],
    changes: ["host dns traffic"],
  },
  observe: observeTranslation,
  properties: [
    {
      id: "translation.host-by-iptables",
      claim:
        "A host process's ClusterIP query is translated by kube-proxy's iptables where kube-proxy runs (the counter moves per query)",
      source: NB("§6"),
      why: "without kube-proxy there is no rule to count: socket LB translates host traffic too",
      expect: { kpr: { eq: "no kube-proxy rule" }, "kube-proxy": { eq: "iptables" } },
      config: {
        // the counter is an iptables rule's (nftables mode writes no counters, ipvs mode no KUBE-SERVICES rule
        // per Service), and the host's query reaches it only where no socket hook translated it first
        assumes: {
          kpr: { kubeProxy: ["none"] },
          "kube-proxy": { kubeProxy: ["iptables"], socketLB: ["off"] },
        },
      },
      needs: ["translation"],
      observe: (r) => {
        const t = r.get("translation");
        let value = "no kube-proxy rule";
        if (t.rule && t.host_packets_before !== null && t.host_packets_after !== null) {
          const moved = u64Diff(t.host_packets_after, t.host_packets_before);
          value =
            t.host_answers > 0 && u64Compare(moved, t.host_answers) >= 0
              ? "iptables"
              : `eBPF (counter +${moved} for ${t.host_answers} answered)`;
        }
        return {
          value,
          evidence: [
            ...r.evidence("translation", "host_packets_before"),
            ...r.evidence("translation", "host_packets_after"),
            ...r.evidence("translation", "host_answers"),
          ],
        };
      },
    },
    {
      id: "translation.pod-by-ebpf",
      claim:
        "A Pod's ClusterIP queries are answered without moving kube-proxy's counter: Cilium translated them in eBPF first",
      source: NB("§7"),
      why: "KPR=false still handles ClusterIP for Pod traffic in bpf_lxc (Cilium docs, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#quick-start: kubeProxyReplacement=false 'only enables per-packet in-cluster load-balancing of ClusterIP services')",
      expect: { kpr: { eq: "eBPF" }, "kube-proxy": { eq: "eBPF" } },
      config: {
        // the evidence beside kube-proxy is its iptables counter that did not move: not modelled for nftables
        // (no counters) or ipvs
        assumes: { kpr: { kubeProxy: ["none"] }, "kube-proxy": { kubeProxy: ["iptables"] } },
      },
      needs: ["translation"],
      observe: (r) => {
        const t = r.get("translation");
        let value = t.pod_answers > 0 ? "eBPF" : "no answers";
        if (
          t.pod_answers > 0 &&
          t.rule &&
          t.pod_packets_before !== null &&
          t.pod_packets_after !== null &&
          u64Compare(t.pod_packets_after, t.pod_packets_before) > 0
        ) {
          value = `iptables (counter +${u64Diff(t.pod_packets_after, t.pod_packets_before)})`;
        }
        return {
          value,
          evidence: [
            ...r.evidence("translation", "pod_packets_before"),
            ...r.evidence("translation", "pod_packets_after"),
            ...r.evidence("translation", "pod_answers"),
          ],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Notebook §6–7. */
export async function observeTranslation(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp } = await clientAndRemote(ctx);
  const node = client.node;
  const nat = async () =>
    read(
      RawText.stdout(
        await ctx.exec.run({ target: { kind: "node", node }, argv: ["iptables-save", "-c", "-t", "nat"] }),
      ),
      parseIptablesSave,
    );
  const beforeHost = await nat();
  const host: Query[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await onNode(ctx, node, ["bash", "-c", hostDnsScript(dnsIp, DNS_NAME, 0x4000 + i)]);
    host.push({ answered: r.exitCode === 0 && r.stdout.includes("answered"), stdout: RawText.stdout(r) });
  }
  const afterHost = await nat();
  const pod: Query[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "dns-client" },
      argv: ["nslookup", DNS_NAME, dnsIp],
    });
    pod.push({ answered: r.exitCode === 0, stdout: RawText.stdout(r) });
  }
  const afterPod = await nat();
  return {
    translation: buildTranslationRecord({
      comment: "kube-system/kube-dns:dns cluster IP",
      host,
      pod,
      beforeHost,
      afterHost,
      beforePod: afterHost,
      afterPod,
    }),
  };
}

/** One DNS query: answered (the host script printed `answered`; nslookup exited 0), and its output. */
export interface Query {
  answered: boolean;
  stdout: RawText;
}

/** The KUBE-SERVICES rule whose comment is `comment` (its packet counter needs `iptables-save -c`). */
export function ruleCounter(save: IptablesSave, comment: string): IptablesRule | null {
  return allRules(save).find((x) => x.chain === "KUBE-SERVICES" && x.comment === comment) ?? null;
}

/** How many queries were answered, derived from each query's output (the host script prints `answered`; nslookup's exit code is in its call). */
function answersEvidence(queries: Query[], what: string): EvidenceItem[] {
  const n = queries.filter((q) => q.answered).length;
  return [
    derive(
      `${n} of ${queries.length} ${what} answered`,
      queries.map((q) => q.stdout),
    ),
  ];
}

/** Notebook §6–7: counters of the kube-dns rule around host queries and around Pod queries. */
export function buildTranslationRecord(input: {
  comment: string;
  host: Query[];
  pod: Query[];
  beforeHost: Read<IptablesSave>;
  afterHost: Read<IptablesSave>;
  beforePod: Read<IptablesSave>;
  afterPod: Read<IptablesSave>;
}): Evidenced<TranslationRecord> {
  const at = (read: Read<IptablesSave>) => {
    const r = ruleCounter(read.parsed, input.comment);
    return {
      rule: r,
      evidence: r
        ? [read.raw.quote(r.line)]
        : [derive(`no KUBE-SERVICES rule commented ${input.comment}`, read.raw)],
    };
  };
  const bh = at(input.beforeHost);
  const ah = at(input.afterHost);
  const bp = at(input.beforePod);
  const ap = at(input.afterPod);
  return {
    record: {
      rule: ah.rule ? input.comment : null,
      host_queries: input.host.length,
      host_answers: input.host.filter((q) => q.answered).length,
      host_packets_before: bh.rule?.packets ?? null,
      host_packets_after: ah.rule?.packets ?? null,
      pod_queries: input.pod.length,
      pod_answers: input.pod.filter((q) => q.answered).length,
      pod_packets_before: bp.rule?.packets ?? null,
      pod_packets_after: ap.rule?.packets ?? null,
    },
    evidence: {
      host_answers: answersEvidence(input.host, "queries from the host"),
      pod_answers: answersEvidence(input.pod, "nslookup queries from the Pod"),
      host_packets_before: bh.evidence,
      host_packets_after: ah.evidence,
      pod_packets_before: bp.evidence,
      pod_packets_after: ap.evidence,
    },
  };
}
