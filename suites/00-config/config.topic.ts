/**
 * Topic "config" — what decides the datapath on this cluster, read before any other topic (issue 25).
 * The agent's status and configuration, what the cilium-config ConfigMap asked, and kube-proxy (its mode, or
 * its absence) become one record: routing and tunnel protocol, host routing, masquerading, socket LB, LB mode
 * and algorithm, device mode, kube-proxy mode, IP families. Every later property resolves its expectation for
 * this configuration (helpers/properties/config.ts): a setting it does not model makes it not applicable.
 *
 * Read top to bottom: the commands it runs (in order, and where), the record it builds, its properties, then
 * the observation code.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { apiJsonRaw, nodes } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw, onNode } from "../../helpers/observe/node.ts";
import { allRules, parseIptablesSave } from "../../helpers/parse/iptables-save.ts";
import { kubeProxyNft, parseNftRuleset } from "../../helpers/parse/nft-ruleset.ts";
import {
  CILIUM_AT,
  K8S_AT,
  KPR_GUIDE,
  KPR_SOCKET_LB,
  KUBE_PROXY_PROXIER,
  UP,
} from "../../helpers/properties/sources.ts";
import {
  buildDatapathConfig,
  configValues,
  formatDatapathConfig,
  unreadSettings,
} from "../../helpers/records/datapath-config.ts";
import { derive, type EvidenceItem, RawText, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { ProxyRulesRecord } from "./config.records.ts";
import { records } from "./config.records.ts";

export const topic = defineTopic({
  name: "config",
  title: "The datapath configuration this cluster runs: what every later expectation is resolved for",
  source: UP(
    `status and config formats: ${CILIUM_AT}/pkg/client/client.go (FormatStatusResponse), ${CILIUM_AT}/cilium-dbg/cmd/config.go`,
  ),
  deploys: [],
  steps: [
    {
      on: "agent",
      run: "cilium-dbg status --verbose",
      for: "routing, host routing, masquerading, socket LB, LB",
    },
    { on: "agent", run: "cilium-dbg config -a", for: "the agent's configuration" },
    { on: "api", run: "get configmaps cilium-config -n kube-system", for: "what was asked" },
    { on: "api", run: "get daemonsets -n kube-system -l k8s-app=kube-proxy", for: "whether kube-proxy runs" },
    { on: "api", run: "get configmaps kube-proxy -n kube-system", for: "kube-proxy's mode" },
    { on: "node", run: "iptables-save", for: "kube-proxy's rules in iptables mode" },
    { on: "node", run: "nft list ruleset", for: "kube-proxy's rules in nftables mode" },
  ],
  records,
  schedule: {
    alone:
      "first, and nothing beside it: the harness resolves every later topic's expectations for the configuration this topic reads",
  },
  observe: observeConfig,
  properties: [
    {
      id: "config.read",
      claim:
        "Every setting that decides the datapath is read from the cluster: routing, host routing, masquerading, socket LB, LB mode and algorithm, device mode, kube-proxy mode, IP families",
      source: UP(
        `status and config formats: ${CILIUM_AT}/pkg/client/client.go (FormatStatusResponse), ${CILIUM_AT}/cilium-dbg/cmd/config.go`,
      ),
      why: "each later property resolves its expectation for these settings; one that cannot be read leaves that property on its declared assumption, said in its verdict. LB mode and algorithm do not apply beside kube-proxy (no BPF NodePort: status prints no Mode line), so they read as n/a there, not unread",
      expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
      config: "none",
      needs: ["config"],
      observe: (r) => {
        const c = r.get("config");
        return {
          value: unreadSettings(c).map((u) => `${u.field}: ${u.reason}`),
          evidence: r.evidence("config", "routing"),
        };
      },
    },
    {
      id: "config.mode-matches",
      claim:
        "The mode the run was asked for is the one the cluster runs: kpr has no kube-proxy and socket LB on; beside kube-proxy, kube-proxy runs",
      source: UP(
        `Cilium docs ${KPR_GUIDE} (kubeProxyReplacement=true replaces kube-proxy); ${KPR_SOCKET_LB} (kube-proxy replacement turns socket LB on)`,
      ),
      why: "a kube-proxy left running beside kpr, or a kpr cluster judged as the kube-proxy mode, would make every mode-keyed property a false verdict",
      expect: {
        kpr: { eq: "kube-proxy none" },
        "kube-proxy": { oneOf: ["kube-proxy iptables", "kube-proxy nftables", "kube-proxy ipvs"] },
      },
      config: "none",
      needs: ["config"],
      observe: (r) => {
        const c = r.get("config");
        return { value: `kube-proxy ${c.kubeProxy.value ?? "unread"}`, evidence: c.kubeProxy.evidence };
      },
    },
    {
      id: "config.kube-proxy-rules",
      claim:
        "Where kube-proxy runs, its Service rules are where its mode puts them (iptables chains, or the nftables table kube-proxy), and translate Services; without kube-proxy there are none in either place",
      source: UP(`${KUBE_PROXY_PROXIER}; ${K8S_AT}/pkg/proxy/nftables/proxier.go`),
      why: "kube-proxy's nftables mode (GA in Kubernetes 1.33) writes nothing to iptables: `iptables-save` is empty of KUBE-SVC rules while kube-proxy still translates every Service, from `table ip kube-proxy` (its service-ips map sends each ClusterIP to a service chain that DNATs to the endpoints). So the suite looks in both places and names the one it found: never 'no kube-proxy' because iptables is empty. kube-dns is the Service every cluster has",
      expect: {
        kpr: { eq: "no kube-proxy rules" },
        "kube-proxy": { match: "^translated by kube-proxy \\((iptables|nftables)\\): kube-system/kube-dns" },
      },
      config: "none",
      needs: ["proxyRules"],
      observe: (r) => {
        const k = r.get("proxyRules");
        return { value: k.summary, evidence: r.evidence("proxyRules", "summary") };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** One agent (the first node's) tells the agent's side; the API tells what was asked and kube-proxy's side. */
export async function observeConfig(ctx: RunContext): Promise<RecordSet> {
  const node = (await nodes(ctx))[0]?.name;
  if (!node) throw new Error("no node to read an agent on");
  const status = await ciliumDbgRaw(ctx, node, ["status", "--verbose"]);
  const config = await ciliumDbgRaw(ctx, node, ["config", "-a"]);
  const ciliumConfigMap = (
    await apiJsonRaw(ctx, { resource: "configmaps", name: "cilium-config", namespace: "kube-system" })
  ).raw;
  const ds = await apiJsonRaw(ctx, {
    resource: "daemonsets",
    namespace: "kube-system",
    selector: "k8s-app=kube-proxy",
  });
  const running = Array.isArray(ds.json.items) && ds.json.items.length > 0;
  const kubeProxyConfigMap = running
    ? (await apiJsonRaw(ctx, { resource: "configmaps", name: "kube-proxy", namespace: "kube-system" })).raw
    : undefined;
  const record = buildDatapathConfig({
    status,
    config,
    ciliumConfigMap,
    ...(kubeProxyConfigMap ? { kubeProxyConfigMap } : {}),
    ...(running ? {} : { kubeProxyAbsent: derive("no kube-proxy DaemonSet in kube-system", ds.raw) }),
  });
  const rules = await proxyRules(ctx, node);
  ctx.log(`datapath: ${formatDatapathConfig(record)}`);
  ctx.log(`kube-proxy's rules: ${rules.record.summary}`);
  ctx.log(`settings as properties read them: ${JSON.stringify(configValues(record))}`);
  const evidence = Object.fromEntries(
    Object.entries(record).map(([k, s]) => [k, (s as { evidence: unknown[] }).evidence]),
  );
  return { config: { record, evidence }, proxyRules: rules };
}

/**
 * kube-proxy's Service rules for kube-dns, where each mode puts them: iptables-save's KUBE-SVC chain
 * (`kube-system/kube-dns:dns cluster IP`), and nft's `table ip kube-proxy` (its service-ips map). `nft` may be
 * missing on a node (then only iptables is read, and the record says so).
 */
async function proxyRules(ctx: RunContext, node: string): Promise<Evidenced<ProxyRulesRecord>> {
  const ipt = read(await iptablesSaveRaw(ctx, node), parseIptablesSave);
  const iptRules = allRules(ipt.parsed).filter((r) => r.comment === "kube-system/kube-dns:dns cluster IP");
  const nftRun = await onNode(ctx, node, ["nft", "list", "ruleset"]);
  let nftLines: EvidenceItem[] = [];
  let nftServices = 0;
  let nftNote: string | null = null;
  if (nftRun.exitCode === 0) {
    const raw = RawText.stdout(nftRun);
    const kp = kubeProxyNft(parseNftRuleset(raw.text));
    nftServices = kp.services.length;
    const dns = kp.services.find(
      (x) => x.namespace === "kube-system" && x.name === "kube-dns" && x.clusterIP,
    );
    nftLines = dns ? dns.lines.slice(0, 3).map((n) => raw.quote(n)) : [];
    if (!dns && kp.tables.length > 0) nftNote = "a kube-proxy nftables table without kube-dns";
  } else nftNote = `nft list ruleset exited ${nftRun.exitCode}: ${nftRun.stderr.trim().split("\n")[0] ?? ""}`;
  const summary =
    iptRules.length > 0 && nftLines.length > 0
      ? "kube-proxy rules in both iptables and nftables"
      : iptRules.length > 0
        ? "translated by kube-proxy (iptables): kube-system/kube-dns in KUBE-SERVICES"
        : nftLines.length > 0
          ? "translated by kube-proxy (nftables): kube-system/kube-dns in table kube-proxy's service-ips"
          : "no kube-proxy rules";
  return {
    record: { summary, iptables_rules: iptRules.length, nft_services: nftServices, nft_note: nftNote },
    evidence: {
      summary: [
        ...iptRules.slice(0, 2).map((r) => ipt.raw.quote(r.line)),
        ...nftLines,
        ...(iptRules.length === 0 && nftLines.length === 0
          ? [
              derive(
                `no KUBE-SVC rule for kube-dns in iptables-save${nftNote ? `; ${nftNote}` : ", none in nft's ruleset"}`,
                ipt.raw,
              ),
            ]
          : []),
      ],
    },
  };
}
