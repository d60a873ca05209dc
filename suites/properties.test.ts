// One file over 450 lines: a pass and a fail per property on the example records: one table of cases over every topic
import { describe, expect, it } from "vitest";
import { MODES } from "../helpers/properties/expectation.ts";
import { judge, judgeAll } from "../helpers/properties/judge.ts";
import { configValues, type DatapathConfig } from "../helpers/records/datapath-config.ts";
import type { RecordSet } from "../helpers/records/types.ts";
import { kprRecords, kubeProxyRecords } from "./example-records.ts";
import { PROPERTIES, propertyById } from "./topics.ts";

function withRecord(set: RecordSet, patch: (s: RecordSet) => void): RecordSet {
  const copy = structuredClone(set);
  patch(copy);
  return copy;
}

describe("declared properties", () => {
  it("ids are unique and every property declares both modes with a source", () => {
    expect(new Set(PROPERTIES.map((p) => p.id)).size).toBe(PROPERTIES.length);
    for (const p of PROPERTIES) {
      for (const m of MODES) expect(p.expect[m], `${p.id} ${m}`).toBeDefined();
      expect(p.source.where.length).toBeGreaterThan(0);
    }
  });

  it("cover every step of the lab and every section of the notebook", () => {
    const lab = new Set(PROPERTIES.filter((p) => p.source.doc === "lab").map((p) => p.source.where));
    expect([...lab].sort()).toEqual([
      "step 1",
      "step 2",
      "step 3",
      "step 4",
      "step 5",
      "step 6",
      "step 7",
      "step 8",
    ]);
    const nb = new Set(PROPERTIES.filter((p) => p.source.doc === "notebook").map((p) => p.source.where));
    expect([...nb].sort()).toEqual(["§2", "§3", "§4", "§5", "§6", "§7", "§8"]);
  });
});

describe("judges on records that satisfy the documents (written by us)", () => {
  it.each([
    ["kpr", kprRecords()],
    ["kube-proxy", kubeProxyRecords()],
  ] as const)("%s: every property passes (skips only where the mode's expectation is n/a)", (mode, records) => {
    const verdicts = judgeAll(PROPERTIES, mode, records, "1.20");
    expect(verdicts.filter((v) => v.status === "fail").map((v) => v.message)).toEqual([]);
    for (const v of verdicts.filter((x) => x.status === "skip"))
      expect(v.message).toMatch(/not applicable|opt-in drop profile only/);
  });

  it("the other mode's records fail the mode-specific properties", () => {
    const failed = judgeAll(PROPERTIES, "kpr", kubeProxyRecords(), "1.20").filter((v) => v.status === "fail");
    expect(failed.map((v) => v.id)).toEqual(
      expect.arrayContaining([
        "iptables.kpr-mode",
        "iptables.kube-svc-lines",
        "holder.socket-peer",
        "holder.svc-entries",
        "nodeport.agent-entry",
        "ghost.kube-proxy-reject-rule",
      ]),
    );
    expect(failed.map((v) => v.id)).not.toContain("nodeport.no-listener");
  });

  // the properties that tell the modes apart (issue 10): each passes on its mode's records (above) and
  // fails on the other mode's, in both directions
  const TELLING = [
    "nodeport.bind-protection",
    "nodeport.bpf-frontends",
    "program.socket-lb-hooks",
    "program.reverse-sk-entry",
    "holder.ct-rev-nat",
    "holder.svc-backend-id",
    "ghost.reject-counter",
    "ipv6.holder-socket-peer",
    "ipv6.holder-svc-entries",
    "ipv6.ghost-errno",
    "ipv6.nodeport-lb-frontends",
    "ipv6.kube-proxy-rules",
  ];
  it.each(TELLING)("%s fails on the other mode's records, both ways", (id) => {
    expect(judge(propertyById(id), "kpr", kubeProxyRecords(), "1.19.7").status).toBe("fail");
    expect(judge(propertyById(id), "kube-proxy", kprRecords(), "1.19.7").status).toBe("fail");
  });

  it("the ipv6 topic on an IPv4-only cluster: every property not applicable, naming the families", () => {
    const v4 = { ...configValues(kprRecords().config?.record as DatapathConfig) };
    for (const p of PROPERTIES.filter((x) => x.topic === "ipv6")) {
      const v = judge(p, "kpr", {}, "1.20.2", v4);
      expect(v.status, p.id).toBe("skip");
      expect(v.reason, p.id).toMatch(/^not applicable: not modelled for ipFamilies ipv4 /);
    }
    // and on a dual-stack one they are judged
    const dual = { ...v4, ipFamilies: "ipv4+ipv6" };
    const judged = PROPERTIES.filter((x) => x.topic === "ipv6").map((p) =>
      judge(p, "kpr", kprRecords(), "1.20.2", dual),
    );
    expect(judged.map((v) => `${v.id} ${v.status}`)).toEqual(judged.map((v) => `${v.id} pass`));
  });

  it("ipv6.backend-slots fails when a slot is not a web Pod's IPv6 address, naming both lists", () => {
    const off = withRecord(kprRecords(), (s) => {
      if (s.ipv6) s.ipv6.record.slots = ["[fd00:10:244:1::3]:8080", "[fd00:10:244:3::9]:8080"];
    });
    expect(judge(propertyById("ipv6.backend-slots"), "kpr", off)).toMatchObject({
      status: "fail",
      observed:
        "slots [[fd00:10:244:1::3]:8080, [fd00:10:244:3::9]:8080], Pods [[fd00:10:244:1::3]:8080, [fd00:10:244:2::7]:8080]",
    });
  });

  it("a kube-proxy REJECT counter that moves for the Pod's probes too fails, naming both deltas", () => {
    const both = withRecord(kubeProxyRecords(), (s) => {
      const c = s.datapath?.record.ghost_reject_counters;
      if (c) c.pod_after = 6;
    });
    expect(judge(propertyById("ghost.reject-counter"), "kube-proxy", both)).toMatchObject({
      status: "fail",
      observed: "host +3 for 3, Pod +3 for 3",
    });
  });

  it("a bundle recorded before a step existed skips the property that needs it, saying so", () => {
    const old = withRecord(kprRecords(), (s) => {
      if (s.datapath)
        Object.assign(s.datapath.record, { nodeport_bind: null, sock_hooks: null, holder_svc_backend: null });
    });
    for (const id of ["nodeport.bind-protection", "program.socket-lb-hooks", "holder.svc-backend-id"]) {
      const v = judge(propertyById(id), "kpr", old);
      expect(v.status, id).toBe("skip");
      expect(v.message).toMatch(/predates/);
    }
  });
});

describe("failing records produce expected vs observed with the evidence line", () => {
  it("KUBE-SVC rules in kpr mode", () => {
    const records = withRecord(kprRecords(), (s) => {
      if (!s.iptables) throw new Error("fixture");
      s.iptables.record.kube_svc_lines = 1;
      s.iptables.evidence.kube_svc_lines = [
        {
          quote: "-A KUBE-SERVICES -d 10.96.44.2/32 -p tcp -j KUBE-SVC-ABCDEF",
          at: { file: "raw/iptables/009-iptables-save.txt", line: 40 },
        },
      ];
    });
    const v = judge(propertyById("iptables.kube-svc-lines"), "kpr", records);
    expect(v.status).toBe("fail");
    expect(v.message).toContain("expected: 0");
    expect(v.message).toContain("observed: 1");
    // "every failure says expected vs observed and shows the raw line", at its place
    expect(v.message).toContain(
      "raw/iptables/009-iptables-save.txt:40  -A KUBE-SERVICES -d 10.96.44.2/32 -p tcp -j KUBE-SVC-ABCDEF",
    );
  });

  it("an outside client that ran and got no HTTP answer fails the NodePort-from-outside property (0, curl's 000); only no client at all skips it", () => {
    const noAnswer = withRecord(kprRecords(), (s) => {
      if (!s.datapath) throw new Error("fixture");
      s.datapath.record.nodeport_outside_http = 0;
    });
    expect(judge(propertyById("nodeport.outside-http-200"), "kpr", noAnswer)).toMatchObject({
      status: "fail",
      observed: "0",
    });
    const noClient = withRecord(kprRecords(), (s) => {
      if (!s.datapath) throw new Error("fixture");
      s.datapath.record.nodeport_outside_http = null;
    });
    expect(judge(propertyById("nodeport.outside-http-200"), "kpr", noClient).status).toBe("skip");
  });

  it("a ghost that times out (exit 28) fails in both modes", () => {
    for (const [mode, base] of [
      ["kpr", kprRecords()],
      ["kube-proxy", kubeProxyRecords()],
    ] as const) {
      const records = withRecord(base, (s) => {
        if (!s.ghost || !s.datapath) throw new Error("fixture");
        s.ghost.record.curl_exit = 28;
        s.ghost.record.seconds = 5.002;
        s.datapath.record.ghost_probes = [
          { from: "pod", exit: 28, seconds: 5.002 },
          { from: "node", exit: 7, seconds: 0.0002 },
        ];
      });
      expect(judge(propertyById("ghost.fails-fast"), mode, records).status).toBe("fail");
      expect(judge(propertyById("ghost.seconds"), mode, records)).toMatchObject({
        status: "fail",
        observed: "[5.002]",
      });
      // the node's probe was refused at once: the host's property holds
      expect(judge(propertyById("ghost.host-seconds"), mode, records)).toMatchObject({
        status: "pass",
        observed: "[0.0002]",
      });
    }
  });

  it("Cilium 1.20.2 with kube-proxy: the Pod's probe waits for curl's limit (the lost reject, PR 48020's backport)", () => {
    const timedOut = withRecord(kubeProxyRecords(), (s) => {
      if (!s.ghost || !s.datapath) throw new Error("fixture");
      s.ghost.record.curl_exit = 28;
      s.datapath.record.ghost_errno = null;
      s.datapath.record.ghost_probes = [
        { from: "pod", exit: 28, seconds: 5.0008 },
        { from: "node", exit: 7, seconds: 0.0004 },
        { from: "pod", exit: 28, seconds: 5.0011 },
      ];
    });
    // the known issue of 1.20.2: its own verdict, never a pass; the node's probes still meet kube-proxy's REJECT
    for (const id of ["ghost.fails-fast", "ghost.errno", "ghost.seconds"])
      expect(judge(propertyById(id), "kube-proxy", timedOut, "1.20.2").status, id).toBe("known-issue");
    expect(judge(propertyById("ghost.host-seconds"), "kube-proxy", timedOut, "1.20.2").status).toBe("pass");
    expect(judge(propertyById("ghost.errno"), "kube-proxy", timedOut, "1.20.2")).toMatchObject({
      observed: "none: timed out (exit 28)",
      expected: "ECONNREFUSED",
    });
    // on 1.20.1 and 1.19.7 the reject arrives: the same observation fails there
    for (const v of ["1.20.1", "1.19.7"])
      expect(judge(propertyById("ghost.fails-fast"), "kube-proxy", timedOut, v).status, v).toBe("fail");
    // and a fast refusal on 1.20.2 passes, saying the known issue is not observed any more: a fix would show
    expect(judge(propertyById("ghost.fails-fast"), "kube-proxy", kubeProxyRecords(), "1.20.2")).toMatchObject(
      {
        status: "pass",
        note: expect.stringMatching(/not observed any more/),
      },
    );
  });

  it("ghost.seconds is judged on every probe: one slow probe among fast ones fails (0.1 s bound)", () => {
    const oneSlow = withRecord(kprRecords(), (s) => {
      if (s.datapath)
        s.datapath.record.ghost_probes = [
          { from: "pod", exit: 7, seconds: 0.002 },
          { from: "node", exit: 7, seconds: 1.02 },
          { from: "pod", exit: 7, seconds: 1.0003 },
        ];
    });
    for (const id of ["ghost.seconds", "ghost.host-seconds"])
      expect(judge(propertyById(id), "kpr", oneSlow), id).toMatchObject({
        status: "fail",
        expected: "each ≤ 0.1",
      });
    // what every real probe took (0.06–6.5 ms) passes
    expect(judge(propertyById("ghost.seconds"), "kpr", kprRecords()).status).toBe("pass");
  });

  it("a node that left Ready or a system Pod that restarted during the run fails the invariants, naming them", () => {
    const broken = withRecord(kprRecords(), (s) => {
      if (!s.invariants) throw new Error("fixture");
      s.invariants.record.node_transitions = [
        { node: "cdc-kpr-worker", ready: "True", since: "2026-12-03T05:33:10Z" },
      ];
      s.invariants.record.system_restarts = [
        {
          pod: "cilium-x7k2p",
          node: "cdc-kpr-worker2",
          why: "created 2026-12-03T05:30:01Z, after the run began",
        },
      ];
    });
    expect(judge(propertyById("invariants.nodes-stayed-ready"), "kpr", broken)).toMatchObject({
      status: "fail",
      observed: '["cdc-kpr-worker: NotReady during the run, Ready again since 2026-12-03T05:33:10Z"]',
    });
    expect(judge(propertyById("invariants.system-not-restarted"), "kpr", broken)).toMatchObject({
      status: "fail",
      observed: '["cilium-x7k2p: created 2026-12-03T05:30:01Z, after the run began"]',
    });
    for (const id of ["invariants.nodes-stayed-ready", "invariants.system-not-restarted"])
      expect(judge(propertyById(id), "kpr", kprRecords()).status, id).toBe("pass");
  });

  it("per-minor expectations: the wildcard entry is expected from 1.19 on", () => {
    const p = propertyById("ghost.wildcard-entry");
    const none = withRecord(kprRecords(), (s) => {
      if (s.datapath) s.datapath.record.ghost_wildcard_entry = false;
    });
    expect(judge(p, "kpr", none, "1.18").status).toBe("pass");
    expect(judge(p, "kpr", none, "1.19").status).toBe("fail");
    expect(judge(p, "kpr", kprRecords(), "1.18").status).toBe("fail");
  });

  it("report.txt that disagrees with the records names the key", () => {
    const records = withRecord(kprRecords(), (s) => {
      if (s.report) s.report.record.holder_backend = "10.244.1.8:8080";
    });
    const v = judge(propertyById("report.consistent"), "kpr", records);
    expect(v.status).toBe("fail");
    expect(v.message).toContain("holder_backend: report=10.244.1.8:8080 ct.backend=10.244.2.9:8080");
  });

  it("a missing record fails with the record named, not a crash", () => {
    const records = kprRecords();
    delete records.ct;
    const v = judge(propertyById("holder.svc-entries"), "kpr", records);
    expect(v).toMatchObject({ status: "fail" });
    expect(v.message).toContain("record ct was not collected");
  });

  it("host traffic translated by eBPF in kube-proxy mode (counter did not move) fails", () => {
    const records = withRecord(kubeProxyRecords(), (s) => {
      if (s.translation) s.translation.record.host_packets_after = 0;
    });
    const v = judge(propertyById("translation.host-by-iptables"), "kube-proxy", records);
    expect(v.status).toBe("fail");
    expect(v.observed).toContain("eBPF");
  });

  it("an unexpected drop reason and an agent error line fail the invariants", () => {
    const records = withRecord(kprRecords(), (s) => {
      if (s.invariants) {
        s.invariants.record.unexpected_drops = ["Policy denied"];
        s.invariants.record.error_lines = [
          'cdc-kpr-worker: time=… level=ERROR msg="Unable to update ipcache map entry"',
        ];
        s.invariants.evidence.error_lines = [
          {
            quote: 'time=… level=ERROR msg="Unable to update ipcache map entry"',
            at: { file: "raw/invariants/003--n-kube-system-logs-cilium-x.txt", line: 12 },
          },
        ];
      }
    });
    expect(judge(propertyById("invariants.no-unexpected-drops"), "kpr", records).observed).toBe(
      '["Policy denied"]',
    );
    const errors = judge(propertyById("invariants.no-agent-errors"), "kpr", records);
    expect(errors.status).toBe("fail");
    expect(errors.message).toContain(
      'raw/invariants/003--n-kube-system-logs-cilium-x.txt:12  time=… level=ERROR msg="Unable to update ipcache map entry"',
    );
  });

  it("'Invalid packet' in the run is cilium#48455's on kpr (the forced hostPort recreations), any other reason fails", () => {
    const drops = (reasons: string[]) =>
      withRecord(kprRecords(), (s) => {
        if (s.invariants) s.invariants.record.unexpected_drops = reasons;
      });
    const p = propertyById("invariants.no-unexpected-drops");
    expect(judge(p, "kpr", drops(["Invalid packet"]), "1.20").status).toBe("known-issue");
    expect(judge(p, "kpr", drops(["Invalid packet", "Policy denied"]), "1.20").status).toBe("fail");
    expect(judge(p, "kpr", drops([]), "1.20").status).toBe("pass");
    expect(judge(p, "kube-proxy", drops(["Invalid packet"]), "1.20").status).toBe("fail");
  });

  it("UDP unanswered at a hostPort is cilium#48455's only where the last graceful recreation left the frontend stale", () => {
    const udpLost = (stale: boolean) =>
      withRecord(kprRecords(), (s) => {
        const v = s.lifecycle?.record;
        if (!v?.hostport_udp) return;
        v.hostport_udp.answer = null;
        const last = v.hostport_cycles.filter((c) => c.how === "graceful").at(-1);
        if (last && stale) last.settled_ms = null;
      });
    const p = propertyById("lifecycle.hostport-udp-beside-tcp");
    expect(judge(p, "kpr", udpLost(true), "1.19").status).toBe("known-issue");
    expect(judge(p, "kpr", udpLost(false), "1.19").status).toBe("fail");
  });

  it("a node that still lists a replaced Pod after a leg fails rolled-backends-active, naming the node", () => {
    const records = withRecord(kprRecords(), (s) => {
      const leg = s.restart?.record.legs[0];
      if (leg?.rolled)
        leg.rolled.views = [
          {
            node: "cdc-kpr-worker",
            backends: ["10.244.1.31:8080 (active)", "10.244.9.9:8080 (terminating)"],
          },
        ];
    });
    const v = judge(propertyById("restart.rolled-backends-active"), "kpr", records, "1.20");
    expect(v.status).toBe("fail");
    expect(v.observed).toContain(
      "cdc-kpr-worker: [10.244.1.31:8080 (active), 10.244.9.9:8080 (terminating)]",
    );
    const old = withRecord(kprRecords(), (s) => {
      const leg = s.restart?.record.legs[0];
      if (leg) delete leg.rolled;
    });
    expect(judge(propertyById("restart.rolled-backends-active"), "kpr", old, "1.20").reason).toMatch(
      /predates the legs rolling a Deployment/,
    );
  });

  it("the opt-in drop profile: reject-only properties skip with the reason, the timeout is judged instead", () => {
    const drop = withRecord(kubeProxyRecords(), (s) => {
      if (s.ghost)
        Object.assign(s.ghost.record, { no_backend_response: "drop", curl_exit: 28, seconds: 5.003 });
      if (s.latency)
        Object.assign(s.latency.record, {
          no_backend_response: "drop",
          ghost_seconds: [5.002, 5.004, 5.003],
          ghost_p50_s: 5.003,
          ghost_p90_s: 5.004,
          ghost_exit_codes: [28],
        });
    });
    for (const id of [
      "ghost.fails-fast",
      "ghost.seconds",
      "ghost.errno",
      "ghost.no-backend-response",
      "measure.ghost-fail-fast-p90",
    ]) {
      const v = judge(propertyById(id), "kube-proxy", drop);
      expect(v.status, id).toBe("skip");
      expect(v.message).toContain("opt-in drop profile");
    }
    expect(judge(propertyById("measure.ghost-drop-timeout"), "kube-proxy", drop)).toMatchObject({
      status: "pass",
      observed: "[5.002,5.004,5.003]",
      expected: "each ≥ 4.9",
    });
    // every probe, not the median: one probe answered at once among waiting ones fails
    const oneFast = withRecord(drop, (s) => {
      if (s.latency) s.latency.record.ghost_seconds = [5.002, 0.002, 5.003];
    });
    expect(judge(propertyById("measure.ghost-drop-timeout"), "kube-proxy", oneFast).status).toBe("fail");
  });

  it("drop profile with kpr: the socket hook still refuses at once, so the fail-fast properties are judged, not skipped", () => {
    const drop = withRecord(kprRecords(), (s) => {
      if (s.ghost) s.ghost.record.no_backend_response = "drop";
      if (s.latency) s.latency.record.no_backend_response = "drop";
    });
    for (const id of ["ghost.fails-fast", "ghost.seconds", "ghost.errno", "measure.ghost-fail-fast-p90"])
      expect(judge(propertyById(id), "kpr", drop).status, id).toBe("pass");
    expect(judge(propertyById("ghost.no-backend-response"), "kpr", drop).status).toBe("skip");
    expect(judge(propertyById("measure.ghost-drop-timeout"), "kpr", drop).status).toBe("pass");
    // a kpr agent that let the probe wait would be a finding, not a skip
    const waited = withRecord(drop, (s) => {
      if (s.ghost) Object.assign(s.ghost.record, { curl_exit: 28, seconds: 5.003 });
      if (s.datapath) s.datapath.record.ghost_probes = [{ from: "pod", exit: 28, seconds: 5.003 }];
      if (s.latency)
        Object.assign(s.latency.record, {
          ghost_seconds: [5.002, 5.004],
          ghost_p50_s: 5.002,
          ghost_p90_s: 5.004,
          ghost_exit_codes: [28],
        });
    });
    for (const id of [
      "ghost.fails-fast",
      "ghost.seconds",
      "measure.ghost-fail-fast-p90",
      "measure.ghost-drop-timeout",
    ])
      expect(judge(propertyById(id), "kpr", waited).status, id).toBe("fail");
  });

  it("ghost.errno by patch: EPERM on 1.18 and 1.19.0–1.19.3 is a known issue (cilium issue 45184), EHOSTUNREACH from 1.19.4", () => {
    const eperm = withRecord(kprRecords(), (s) => {
      if (s.datapath) s.datapath.record.ghost_errno = "EPERM";
    });
    const p = propertyById("ghost.errno");
    // a known issue of those versions: its own verdict, expected what the hook means (EHOSTUNREACH)
    expect(judge(p, "kpr", eperm, "1.19.3")).toMatchObject({
      status: "known-issue",
      expected: "EHOSTUNREACH",
    });
    for (const v of ["1.19.2", "1.19.1", "1.18.11", "1.18"])
      expect(judge(p, "kpr", eperm, v).status, v).toBe("known-issue");
    expect(judge(p, "kpr", eperm, "1.19.4")).toMatchObject({ status: "fail", expected: "EHOSTUNREACH" });
    expect(judge(p, "kpr", eperm, "1.20.2").status).toBe("fail");
    // EHOSTUNREACH where the known issue was declared: a pass that says the issue is not observed any more
    expect(judge(p, "kpr", kprRecords(), "1.18.11")).toMatchObject({
      status: "pass",
      note: expect.stringMatching(/known issue declared for Cilium 1\.18 is not observed any more/),
    });
    // the bind hook loses its errno the same way
    const bindEperm = withRecord(kprRecords(), (s) => {
      if (s.datapath) s.datapath.record.nodeport_bind = "EPERM";
    });
    const bind = propertyById("nodeport.bind-protection");
    expect(judge(bind, "kpr", bindEperm, "1.18.11").status).toBe("known-issue");
    expect(judge(bind, "kpr", bindEperm, "1.19.3").status).toBe("known-issue");
    expect(judge(bind, "kpr", bindEperm, "1.19.7")).toMatchObject({
      status: "fail",
      note: expect.stringMatching(/what the known issue of Cilium 1\.18 makes it/),
    });
    expect(judge(p, "kpr", kprRecords(), "1.19.3").status).toBe("pass");
    expect(judge(p, "kpr", kprRecords(), "1.19.7").status).toBe("pass");
    // a bare minor does not know its patch: the minor's expectation applies
    expect(judge(p, "kpr", kprRecords(), "1.19").status).toBe("pass");
  });

  it("translation counters beyond 2^53 are compared exactly", () => {
    const big = withRecord(kubeProxyRecords(), (s) => {
      if (s.translation)
        Object.assign(s.translation.record, {
          host_packets_before: "9007199254740993",
          host_packets_after: "9007199254741003",
          host_answers: 10,
        });
    });
    expect(judge(propertyById("translation.host-by-iptables"), "kube-proxy", big).observed).toBe("iptables");
    const short = withRecord(big, (s) => {
      if (s.translation) s.translation.record.host_packets_after = "9007199254741001";
    });
    expect(judge(propertyById("translation.host-by-iptables"), "kube-proxy", short).observed).toBe(
      "eBPF (counter +8 for 10 answered)",
    );
  });

  describe("native routing: the opposite claim (no tunnel, the backend on the wire)", () => {
    const native = {
      routing: "native",
      tunnelProtocol: null,
      hostRouting: "bpf",
      masquerading: "bpf",
      socketLB: "on",
      lbMode: "snat",
      lbAlgorithm: "random",
      deviceMode: "veth",
      kubeProxy: "none",
      ipFamilies: "ipv4",
    } as const;
    const onWire = (wire: { packets: number; encapsulated: number; destinations: string[] }) =>
      withRecord(kprRecords(), (s) => {
        if (s.vxlan) s.vxlan.record = { ...s.vxlan.record, wire: { device: "eth0", ...wire } };
      });
    const p = propertyById("vxlan.backend-inside-tunnel");
    it.each([
      [
        { packets: 10, encapsulated: 0, destinations: ["10.244.2.3:53"] },
        "pass",
        "backend on the wire, not encapsulated",
      ],
      [{ packets: 10, encapsulated: 0, destinations: ["10.96.0.10:53"] }, "fail", "ClusterIP on the wire"],
      [
        { packets: 10, encapsulated: 4, destinations: ["10.244.2.3:53"] },
        "fail",
        "encapsulated (4 tunnel packets on eth0)",
      ],
      [{ packets: 0, encapsulated: 0, destinations: [] }, "fail", "no query on eth0"],
    ])("%o: %s (%s)", (wire, status, observed) => {
      const v = judge(p, "kpr", onWire(wire), "1.20.2", native);
      expect(v.status).toBe(status);
      expect(v.observed).toBe(observed);
      expect(v.configuration).toMatch(/routing native/);
    });
    it("the remote PodCIDR's route: over the underlay device with native routing, cilium_host is a failure there", () => {
      const route = (dev: string, underlay: string | null) =>
        withRecord(kprRecords(), (s) => {
          if (s.route)
            s.route.record = { ...s.route.record, dev, via: "172.31.100.2", underlay_dev: underlay };
        });
      const hr = propertyById("host-routing.remote-podcidr-via-cilium-host");
      const ok = judge(hr, "kpr", route("eth0", "eth0"), "1.20.2", native);
      expect([ok.status, ok.observed]).toEqual(["pass", "the underlay device (eth0 via 172.31.100.2)"]);
      expect(judge(hr, "kpr", route("cilium_host", "eth0"), "1.20.2", native).status).toBe("fail");
      expect(judge(hr, "kpr", route("eth1", "eth0"), "1.20.2", native).observed).toBe("eth1");
      // the tunnel's own expectation is untouched
      expect(
        judge(hr, "kpr", kprRecords(), "1.20.2", { ...native, routing: "tunnel", tunnelProtocol: "vxlan" })
          .status,
      ).toBe("pass");
    });
    it("beside kube-proxy too; geneve stays not applicable, naming it", () => {
      expect(
        judge(
          p,
          "kube-proxy",
          onWire({ packets: 3, encapsulated: 0, destinations: ["10.244.2.3:53"] }),
          "1.20.2",
          { ...native, socketLB: "off", kubeProxy: "iptables" },
        ).status,
      ).toBe("pass");
      const geneve = judge(p, "kpr", kprRecords(), "1.20.2", {
        ...native,
        routing: "tunnel",
        tunnelProtocol: "geneve",
      });
      expect(geneve.status).toBe("skip");
      expect(geneve.reason).toMatch(/tunnelProtocol geneve/);
    });
  });

  it("ClusterIP inside the tunnel fails", () => {
    const records = withRecord(kubeProxyRecords(), (s) => {
      if (s.vxlan) s.vxlan.record.inner_destinations = ["10.96.0.10:53"];
    });
    expect(judge(propertyById("vxlan.backend-inside-tunnel"), "kube-proxy", records).observed).toBe(
      "ClusterIP inside tunnel",
    );
  });
});
