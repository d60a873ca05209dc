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
import { allRules, type IptablesSave, parseIptablesSave } from "../../helpers/parse/iptables-save.ts";
import { type U64, u64Compare, u64Diff } from "../../helpers/parse/u64.ts";
import { NB } from "../../helpers/properties/sources.ts";
import type { Evidenced, RecordSet, TranslationRecord } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

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
  builds: ["translation"],
  observe: observeTranslation,
  properties: [
    {
      id: "translation.host-by-iptables",
      claim:
        "A host process's ClusterIP query is translated by kube-proxy's iptables where kube-proxy runs (the counter moves per query)",
      source: NB("§6"),
      why: "without kube-proxy there is no rule to count: socket LB translates host traffic too",
      expect: { kpr: { eq: "no kube-proxy rule" }, "kube-proxy": { eq: "iptables" } },
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
          ],
        };
      },
    },
    {
      id: "translation.pod-by-ebpf",
      claim:
        "A Pod's ClusterIP queries are answered without moving kube-proxy's counter: Cilium translated them in eBPF first",
      source: NB("§7"),
      why: "KPR=false still handles ClusterIP for Pod traffic in bpf_lxc (knowledge clusters.md §4.2)",
      expect: { kpr: { eq: "eBPF" }, "kube-proxy": { eq: "eBPF" } },
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
            `pod answers ${t.pod_answers}/${t.pod_queries}`,
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
    parseIptablesSave(
      (await ctx.exec.run({ target: { kind: "node", node }, argv: ["iptables-save", "-c", "-t", "nat"] }))
        .stdout,
    );
  const beforeHost = await nat();
  let hostAnswers = 0;
  for (let i = 0; i < 10; i++) {
    const r = await onNode(ctx, node, ["bash", "-c", hostDnsScript(dnsIp, DNS_NAME, 0x4000 + i)]);
    if (r.exitCode === 0 && r.stdout.includes("answered")) hostAnswers++;
  }
  const afterHost = await nat();
  let podAnswers = 0;
  for (let i = 0; i < 5; i++) {
    const r = await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "dns-client" },
      argv: ["nslookup", DNS_NAME, dnsIp],
    });
    if (r.exitCode === 0) podAnswers++;
  }
  const afterPod = await nat();
  return {
    translation: buildTranslationRecord({
      comment: "kube-system/kube-dns:dns cluster IP",
      hostQueries: 10,
      hostAnswers,
      podQueries: 5,
      podAnswers,
      beforeHost,
      afterHost,
      beforePod: afterHost,
      afterPod,
    }),
  };
}

/** The packet counter of the KUBE-SERVICES rule whose comment is `comment` (needs `iptables-save -c`). */
export function ruleCounter(
  save: IptablesSave,
  comment: string,
): { packets: U64 | null; text: string } | null {
  const r = allRules(save).find((x) => x.chain === "KUBE-SERVICES" && x.comment === comment);
  return r ? { packets: r.packets, text: r.text } : null;
}

/** Notebook §6–7: counters of the kube-dns rule around host queries and around Pod queries. */
export function buildTranslationRecord(input: {
  comment: string;
  hostQueries: number;
  hostAnswers: number;
  podQueries: number;
  podAnswers: number;
  beforeHost: IptablesSave;
  afterHost: IptablesSave;
  beforePod: IptablesSave;
  afterPod: IptablesSave;
}): Evidenced<TranslationRecord> {
  const bh = ruleCounter(input.beforeHost, input.comment);
  const ah = ruleCounter(input.afterHost, input.comment);
  const bp = ruleCounter(input.beforePod, input.comment);
  const ap = ruleCounter(input.afterPod, input.comment);
  return {
    record: {
      rule: ah ? input.comment : null,
      host_queries: input.hostQueries,
      host_answers: input.hostAnswers,
      host_packets_before: bh?.packets ?? null,
      host_packets_after: ah?.packets ?? null,
      pod_queries: input.podQueries,
      pod_answers: input.podAnswers,
      pod_packets_before: bp?.packets ?? null,
      pod_packets_after: ap?.packets ?? null,
    },
    evidence: {
      host_packets_before: bh ? [bh.text] : [],
      host_packets_after: ah ? [ah.text] : [],
      pod_packets_before: bp ? [bp.text] : [],
      pod_packets_after: ap ? [ap.text] : [],
    },
  };
}
