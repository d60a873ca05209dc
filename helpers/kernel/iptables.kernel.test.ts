/**
 * iptables on the real kernel, in namespaces this file creates: kube-proxy-shaped DNAT chains, line
 * counting, counters that move through DNAT, the nf_tables vs legacy backends and the warning when the
 * other backend holds the rules. Traffic stays between the two lab namespaces (no default route).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIptablesRecord } from "../../suites/01-iptables/iptables.topic.ts";
import { ruleCounter } from "../../suites/11-translation/translation.topic.ts";
import { noSleep, type RunContext } from "../observe/context.ts";
import { iptablesSave } from "../observe/node.ts";
import { curlArgv, parseCurl } from "../parse/curl.ts";
import { kubeProxyChains, linesContaining, parseIptablesSave } from "../parse/iptables-save.ts";
import { parseStatus } from "../parse/status.ts";
import { NOT_RECORDED, RawText } from "../records/evidence.ts";
import { NetnsLab } from "./netns-lab.ts";

const why = NetnsLab.unavailable([
  "ip",
  "iptables",
  "iptables-save",
  "iptables-legacy",
  "iptables-legacy-save",
  "curl",
]);
const VIP = "10.96.0.10";
const COMMENT = "cca-dp/web:http cluster IP";

describe.skipIf(why !== null)(`iptables on the real kernel${why ? ` (skipped: ${why})` : ""}`, () => {
  let lab: NetnsLab;
  beforeAll(async () => {
    lab = await NetnsLab.create();
    await lab.httpServer(lab.b, 8080);
    // kube-proxy's shape: KUBE-SERVICES → KUBE-SVC-* → KUBE-SEP-* → DNAT, in namespace a (the "node")
    const ipt = (...args: string[]) => lab.must(lab.a, ["iptables", "-t", "nat", ...args]);
    await ipt("-N", "KUBE-SERVICES");
    await ipt("-N", "KUBE-SVC-TCOU7JCQXEZGVUNU");
    await ipt("-N", "KUBE-SEP-L5JRWRCR3OTUNAH5");
    await ipt(
      "-A",
      "OUTPUT",
      "-m",
      "comment",
      "--comment",
      "kubernetes service portals",
      "-j",
      "KUBE-SERVICES",
    );
    await ipt(
      "-A",
      "KUBE-SERVICES",
      "-d",
      `${VIP}/32`,
      "-p",
      "tcp",
      "-m",
      "comment",
      "--comment",
      COMMENT,
      "-m",
      "tcp",
      "--dport",
      "80",
      "-j",
      "KUBE-SVC-TCOU7JCQXEZGVUNU",
    );
    await ipt(
      "-A",
      "KUBE-SVC-TCOU7JCQXEZGVUNU",
      "-m",
      "comment",
      "--comment",
      `cca-dp/web:http -> ${lab.ipB}:8080`,
      "-j",
      "KUBE-SEP-L5JRWRCR3OTUNAH5",
    );
    await ipt(
      "-A",
      "KUBE-SEP-L5JRWRCR3OTUNAH5",
      "-p",
      "tcp",
      "-m",
      "comment",
      "--comment",
      "cca-dp/web:http",
      "-m",
      "tcp",
      "-j",
      "DNAT",
      "--to-destination",
      `${lab.ipB}:8080`,
    );
    // the Service CIDR routes into the veth only: no default route anywhere in the lab
    await lab.must(lab.a, ["ip", "route", "add", "10.96.0.0/16", "dev", lab.devA]);
  });
  afterAll(() => lab?.destroy());

  it("a fresh namespace's iptables-save is empty (no header at all)", async () => {
    const r = await lab.must(lab.b, ["iptables-save"]);
    expect(r.stdout).toBe("");
    expect(parseIptablesSave(r.stdout).tables).toEqual({});
  });

  it("the real dump parses: nf_tables backend, chains, the DNAT rule, kube-proxy chains, line counts", async () => {
    const raw = (await lab.must(lab.a, ["iptables-save"])).stdout;
    const save = parseIptablesSave(raw);
    expect(save.backend).toBe("nf_tables");
    expect(kubeProxyChains(save)).toEqual([
      "KUBE-SEP-L5JRWRCR3OTUNAH5",
      "KUBE-SERVICES",
      "KUBE-SVC-TCOU7JCQXEZGVUNU",
    ]);
    const dnat = save.tables.nat?.rules.find((r) => r.target === "DNAT");
    expect(dnat?.spec).toContain(`--to-destination ${lab.ipB}:8080`);
    const status = "KubeProxyReplacement:    False";
    const rec = buildIptablesRecord({
      iptablesSave: RawText.of(raw, { file: NOT_RECORDED }),
      clusterIp: VIP,
      status: { parsed: parseStatus(status), raw: RawText.of(status, { file: NOT_RECORDED }) },
    }).record;
    // :KUBE-SVC declaration, the KUBE-SERVICES jump and the KUBE-SVC rule itself
    expect(rec).toEqual({
      cluster_ip: VIP,
      kube_svc_lines: 3,
      cluster_ip_lines: 1,
      cilium_lines: 0,
      kube_proxy_replacement: "False",
    });
    expect(linesContaining(raw, "KUBE-SEP")).toHaveLength(3);
  });

  it("counters move for traffic translated by the DNAT rule (iptables-save -c)", async () => {
    const before = ruleCounter(
      parseIptablesSave((await lab.must(lab.a, ["iptables-save", "-c", "-t", "nat"])).stdout),
      COMMENT,
    );
    const r = await lab.run(lab.a, curlArgv(`http://${VIP}/`));
    expect(parseCurl({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }).verdict).toBe("HTTP 200");
    const after = ruleCounter(
      parseIptablesSave((await lab.must(lab.a, ["iptables-save", "-c", "-t", "nat"])).stdout),
      COMMENT,
    );
    expect(before?.packets).toBe(0);
    expect(after?.packets).toBe(1);
    expect(after?.text).toMatch(/^\[1:60\] -A KUBE-SERVICES -d 10\.96\.0\.10\/32/);
  });

  it("legacy rules: the nft iptables-save warns and prints nothing; the node reader then dumps the legacy tables", async () => {
    await lab.must(lab.b, ["iptables-legacy", "-t", "nat", "-N", "KUBE-SVC-LEGACY0000000000"]);
    await lab.must(lab.b, [
      "iptables-legacy",
      "-t",
      "nat",
      "-A",
      "KUBE-SVC-LEGACY0000000000",
      "-p",
      "tcp",
      "-j",
      "DNAT",
      "--to-destination",
      `${lab.ipB}:8080`,
    ]);
    const nft = await lab.must(lab.b, ["iptables-save"]);
    expect(nft.stdout).toBe("");
    expect(parseIptablesSave(nft.stderr).warnings).toEqual([
      expect.stringContaining("iptables-legacy tables present"),
    ]);
    const ctx = { exec: lab.nodeShell(lab.b), sleep: noSleep, log: () => {} } as unknown as RunContext;
    const raw = await iptablesSave(ctx, "node-b");
    const save = parseIptablesSave(raw);
    expect(save.backend).toBe("legacy");
    expect(kubeProxyChains(save)).toEqual(["KUBE-SVC-LEGACY0000000000"]);
  });
});
