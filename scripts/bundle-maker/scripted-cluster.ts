// One file over 450 lines: one scripted cluster answers every topic's commands from one state (applied objects, replicas, counters)
/**
 * WRITTEN BY US. A scripted stand-in for a cluster, used only to MAKE hand-made bundles: it answers each
 * command the observers run with output in the documented formats (outputs.ts), and keeps the little
 * state the lab's steps change (applied objects, web replicas, DNS counters). Recording it through the
 * real observers gives a bundle that replays every spec end to end. It is never used to judge a cluster.
 */
import type { ExecRequest, ExecResult, Executor } from "../../helpers/exec/types.ts";
import { targetKey } from "../../helpers/exec/types.ts";
import * as out from "./outputs.ts";
import type { PodSpec, Scenario } from "./scenario.ts";

const ok = (stdout: string, stderr = ""): ExecResult => ({ stdout, stderr, exitCode: 0, durationMs: 12 });
const fail = (code: number, stderr: string, stdout = ""): ExecResult => ({
  stdout,
  stderr,
  exitCode: code,
  durationMs: 9,
});

export class ScriptedCluster implements Executor {
  private replicas = 0;
  /** Polls of the web Pods since the last scale (new Pods turn Ready on the second look). */
  private podPolls = 0;
  private lbPolls = 0;
  private readonly applied = new Set<string>();
  private hostDnsQueries = 0;
  private captureStarted = false;
  /** The Cilium version the agents run: changes when the upgrade leg runs `helm upgrade cilium`. */
  private ciliumNow: string;
  private preflightPolls = 0;

  constructor(private readonly s: Scenario) {
    this.ciliumNow = s.cilium;
  }

  private webPods(): PodSpec[] {
    return this.s.web.slice(0, this.replicas);
  }

  /** What the agent's map holds: it trails the Pods by one poll after a scale (convergence). */
  private mapWeb(): PodSpec[] {
    const n = this.replicas === 4 && this.lbPolls < 2 ? 2 : this.replicas;
    return this.s.web.slice(0, n);
  }

  /** Measurement Services (issue 6): name → ClusterIP and endpoint addresses. */
  private readonly measure = new Map<string, { ip: string; endpoints: string[] }>();
  /** bpf lb list polls per node since the latency Service's slice last changed. */
  private readonly latencyPolls = new Map<string, number>();
  private latencyKubeProxyPolls = 0;

  /** The latency Service's newest endpoint reaches node i's map on its (i+1)-th poll (and kube-proxy on the 2nd). */
  private measureSvcs(node: string | null, forKubeProxy = false): out.MeasureSvc[] {
    let id = 100;
    return [...this.measure.entries()].map(([name, m]) => {
      let eps = m.endpoints;
      if (name === "dpc-c") {
        const seen = forKubeProxy
          ? this.latencyKubeProxyPolls >= 2
          : (this.latencyPolls.get(node ?? "") ?? 0) >= this.s.nodes.findIndex((n) => n.name === node) + 1;
        if (!seen) eps = eps.slice(0, -1);
      }
      return { id: id++, name, ip: m.ip, endpoints: eps };
    });
  }

  private svcList(node: string | null = null) {
    return [
      ...out.services(this.s, this.mapWeb(), {
        ghost: this.applied.has("ghost"),
        nodePort: this.applied.has("web-np"),
      }),
      ...out.measureServices(this.measureSvcs(node)),
    ];
  }

  private applyMeasure(stdin: string): string[] {
    const doc = JSON.parse(stdin) as { kind: string; items?: Record<string, unknown>[] } & Record<
      string,
      unknown
    >;
    const items = doc.kind === "List" ? (doc.items ?? []) : [doc];
    const made: string[] = [];
    for (const it of items) {
      const meta = it.metadata as { name: string; labels?: Record<string, string> };
      if (it.kind === "Service") {
        if (!this.measure.has(meta.name))
          this.measure.set(meta.name, {
            ip: `10.96.${150 + (this.measure.size >> 8)}.${this.measure.size & 255}`,
            endpoints: [],
          });
      } else if (it.kind === "EndpointSlice") {
        const svc = meta.labels?.["kubernetes.io/service-name"] ?? "";
        const m = this.measure.get(svc);
        if (m) m.endpoints = (it.endpoints as { addresses: string[] }[]).map((e) => e.addresses[0] as string);
        if (svc === "dpc-c") {
          this.latencyPolls.clear();
          this.latencyKubeProxyPolls = 0;
        }
      }
      made.push(`${String(it.kind).toLowerCase()}/${meta.name} configured`);
    }
    return made;
  }

  private podJson(p: PodSpec, ready: boolean, labels: Record<string, string>) {
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: p.name, namespace: labels["k8s-app"] ? "kube-system" : "cca-dp", labels },
      spec: { nodeName: p.node },
      status: {
        phase: "Running",
        podIP: p.ip,
        conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
      },
    };
  }

  private list(items: unknown[]) {
    return ok(`${JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 2)}\n`);
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    const a = req.argv;
    const cmd = a.join(" ");
    switch (req.target.kind) {
      case "kubectl":
        return this.kubectl(a, req.stdin ?? "");
      case "agent":
        return this.agent(a, req.target.node);
      case "node":
        return this.node(req.target.node, a);
      case "pod":
        return this.pod(req.target.pod, a);
      case "local":
        if (a[0] === "helm") return this.helm(a);
        break;
      case "outside":
        if (a[0] === "curl") return ok("http_code=200 time_total=0.002913");
        break;
      default:
        break;
    }
    throw new Error(`scripted cluster: no answer for ${targetKey(req.target)} ${cmd}`);
  }

  private helm(a: string[]): ExecResult {
    if (a[1] === "upgrade" && a[2] === "cilium") {
      this.ciliumNow = a[a.indexOf("--version") + 1] as string;
      return ok(
        `Release "cilium" has been upgraded. Happy Helming!\nNAME: cilium\nNAMESPACE: kube-system\nSTATUS: deployed\nREVISION: 2\n`,
      );
    }
    if (a[1] === "upgrade" && a[2] === "--install" && a[3] === "cilium-preflight")
      return ok(`Release "cilium-preflight" does not exist. Installing it now.\nSTATUS: deployed\n`);
    if (a[1] === "uninstall" && a[2] === "cilium-preflight")
      return ok(`release "cilium-preflight" uninstalled\n`);
    throw new Error(`scripted cluster: no answer for ${a.join(" ")}`);
  }

  private kubectl(a: string[], stdin: string): ExecResult {
    const s = this.s;
    const cmd = a.join(" ");
    if (cmd === "apply -f -" && stdin.trimStart().startsWith("{") && stdin.includes('"dpc-measure"')) {
      return ok(`${this.applyMeasure(stdin).join("\n")}\n`);
    }
    const del = /^-n cca-dp delete services,endpointslices -l dpc-measure=(scale|latency) --wait=true$/.exec(
      cmd,
    );
    if (del) {
      for (const name of [...this.measure.keys()])
        if ((del[1] === "scale") === name.startsWith("dpc-m-")) this.measure.delete(name);
      return ok("deleted\n");
    }
    if (cmd === "apply -f -") {
      const made: string[] = [];
      for (const [, kind, name] of stdin.matchAll(/"?kind"?:\s*"?(\w+)"?[\s\S]*?"?name"?:\s*"?([\w-]+)"?/g)) {
        this.applied.add(name as string);
        made.push(`${(kind as string).toLowerCase()}/${name} configured`);
      }
      if (stdin.includes("name: web\n") && this.replicas === 0) this.replicas = 2;
      return ok(`${made.join("\n")}\n`);
    }
    const scale = /^-n cca-dp scale deployment web --replicas=(\d+)$/.exec(cmd);
    if (scale) {
      const n = Number(scale[1]);
      if (n !== this.replicas) {
        this.replicas = n;
        this.podPolls = 0;
        this.lbPolls = 0;
      }
      return ok("deployment.apps/web scaled\n");
    }
    if (cmd === "-n cca-dp get pods -l app=web -o json") {
      this.podPolls++;
      return this.list(
        this.webPods().map((p, i) => this.podJson(p, i < 2 || this.podPolls > 1, { app: "web" })),
      );
    }
    if (cmd === "-n kube-system get daemonset cilium-pre-flight-check -o json") {
      this.preflightPolls++;
      const ready = this.preflightPolls > 1 ? 3 : 1;
      return ok(
        `${JSON.stringify({ kind: "DaemonSet", metadata: { name: "cilium-pre-flight-check" }, status: { desiredNumberScheduled: 3, numberReady: ready } }, null, 2)}\n`,
      );
    }
    if (cmd === "-n kube-system get deployment cilium-pre-flight-check -o json") {
      return ok(
        `${JSON.stringify({ kind: "Deployment", metadata: { name: "cilium-pre-flight-check" }, status: { readyReplicas: 1 } }, null, 2)}\n`,
      );
    }
    if (cmd === "-n kube-system get pods -l k8s-app=cilium -o json") {
      return this.list(
        s.nodes.map((n, i) =>
          this.podJson({ name: `cilium-${["x7k2p", "m4q9t", "z8r5w"][i]}`, ip: n.ip, node: n.name }, true, {
            "k8s-app": "cilium",
          }),
        ),
      );
    }
    const logs = /^-n kube-system logs (cilium-\w+) -c cilium-agent --since-time=(\S+)$/.exec(cmd);
    if (logs) {
      return ok(
        [
          `time=2026-12-02T09:12:44.101Z level=INFO source=/go/src/github.com/cilium/cilium/pkg/endpoint/endpoint.go:2101 msg="Rewrote endpoint BPF program" ciliumEndpointName=cca-dp/holder endpointID=${s.holderEndpointId}`,
          'time=2026-12-02T09:13:20.877Z level=WARN source=/go/src/github.com/cilium/cilium/pkg/hubble/observer/local_observer.go:263 msg="Hubble ring buffer is full, oldest flows dropped"',
          "",
        ].join("\n"),
      );
    }
    if (cmd === "-n kube-system get pods -l k8s-app=kube-dns -o json") {
      return this.list(s.coredns.map((p) => this.podJson(p, true, { "k8s-app": "kube-dns" })));
    }
    const one = /^-n cca-dp get pod (\S+) -o json$/.exec(cmd);
    if (one) {
      const p = [
        s.holder,
        s.probe,
        s.dnsClient,
        { name: "capture", ip: s.nodes[1]?.ip as string, node: s.dnsClient.node },
      ].find((x) => x.name === one[1]);
      if (!p) return fail(1, `Error from server (NotFound): pods "${one[1]}" not found\n`);
      return ok(`${JSON.stringify(this.podJson(p, true, { app: p.name }), null, 2)}\n`);
    }
    const svc = /^-n (\S+) get service (\S+) -o json$/.exec(cmd);
    if (svc) {
      const ip =
        { web: s.ips.web, ghost: s.ips.ghost, "web-np": s.ips.webNp, "kube-dns": s.ips.kubeDns }[
          svc[2] as string
        ] ?? this.measure.get(svc[2] as string)?.ip;
      if (!ip) return fail(1, `Error from server (NotFound): services "${svc[2]}" not found\n`);
      return ok(
        `${JSON.stringify({ apiVersion: "v1", kind: "Service", metadata: { name: svc[2], namespace: svc[1] }, spec: { clusterIP: ip } }, null, 2)}\n`,
      );
    }
    if (cmd === "get nodes -o json") {
      return this.list(
        s.nodes.map((n) => ({
          kind: "Node",
          metadata: { name: n.name },
          spec: { podCIDR: n.podCidr },
          status: {
            addresses: [
              { type: "InternalIP", address: n.ip },
              { type: "Hostname", address: n.name },
            ],
            nodeInfo: {
              kernelVersion: s.kernel,
              kubeletVersion: s.kubernetes,
              containerRuntimeVersion: "containerd://2.1.3",
            },
          },
        })),
      );
    }
    const eps = /^-n (\S+) get endpointslices -l kubernetes\.io\/service-name=(\S+) -o json$/.exec(cmd);
    if (eps) {
      const dns = eps[2] === "kube-dns";
      const pods = dns ? s.coredns : this.webPods();
      const ports = dns
        ? [
            { name: "dns", port: 53, protocol: "UDP" },
            { name: "dns-tcp", port: 53, protocol: "TCP" },
            { name: "metrics", port: 9153, protocol: "TCP" },
          ]
        : [{ name: "http", port: 8080, protocol: "TCP" }];
      return this.list([
        {
          apiVersion: "discovery.k8s.io/v1",
          kind: "EndpointSlice",
          metadata: {
            name: `${eps[2]}-x7k2p`,
            namespace: eps[1],
            labels: { "kubernetes.io/service-name": eps[2] },
          },
          addressType: "IPv4",
          ports,
          endpoints: pods.map((p) => ({
            addresses: [p.ip],
            conditions: { ready: true, serving: true, terminating: false },
            nodeName: p.node,
            targetRef: { kind: "Pod", name: p.name, namespace: eps[1] },
          })),
        },
      ]);
    }
    if (cmd === "-n cca-dp get ciliumendpoints.cilium.io holder -o json") {
      return ok(
        `${JSON.stringify({ apiVersion: "cilium.io/v2", kind: "CiliumEndpoint", metadata: { name: "holder" }, status: { id: s.holderEndpointId, state: "ready" } }, null, 2)}\n`,
      );
    }
    if (cmd === "-n cca-dp logs holder") {
      const t = "2026-12-02T09:13:0";
      return ok(
        [
          `{"event":"start","t":"${t}0.114Z","target":"${s.ips.web}:80","localPort":40404}`,
          `{"event":"connected","t":"${t}0.131Z","local":"${s.holder.ip}:40404","peer":"${s.ips.web}:80","connection":1}`,
          `{"event":"reply","t":"${t}0.139Z","status":200,"body":"${s.holder.ip}:40404"}`,
          `{"event":"reply","t":"${t}2.141Z","status":200,"body":"${s.holderBackend.name}"}`,
          "",
        ].join("\n"),
      );
    }
    throw new Error(`scripted cluster: no answer for kubectl ${cmd}`);
  }

  private agent(a: string[], agentNode: string): ExecResult {
    const s = this.s;
    const cmd = a.join(" ");
    const node = s.holder.node;
    const now = { ...s, cilium: this.ciliumNow };
    if (cmd === "cilium-dbg status") return ok(out.status(now, node, false));
    if (cmd === "cilium-dbg status --verbose") return ok(out.status(now, node, true));
    if (cmd === "cilium-dbg status --brief") return ok("OK\n");
    if (cmd === "cilium-dbg service list -o json") return ok(out.serviceListJson(this.svcList(agentNode)));
    if (cmd === "cilium-dbg bpf lb list") {
      this.lbPolls++;
      this.latencyPolls.set(agentNode, (this.latencyPolls.get(agentNode) ?? 0) + 1);
      return ok(
        out.bpfLbList(
          s,
          this.svcList(agentNode),
          s.nodes.map((n) => n.ip),
        ),
      );
    }
    if (cmd === "cilium-dbg bpf ct list global") return ok(out.ctList(s));
    if (cmd === "cilium-dbg config -a") return ok(out.configAll());
    if (cmd === `cilium-dbg endpoint get ${s.holderEndpointId} -o json`) return ok(out.endpointGet(s));
    if (cmd === "cilium-dbg map list") return ok(out.mapList(s));
    if (cmd === "cilium-dbg metrics list -o json") return ok(out.metricsJson(s));
    if (cmd === `bpftool net show dev ${s.holderDev}`) return ok(out.bpftoolNetDev(s));
    throw new Error(`scripted cluster: no answer for agent ${cmd}`);
  }

  private node(node: string, a: string[]): ExecResult {
    const s = this.s;
    const cmd = a.join(" ");
    const opts = { ghost: this.applied.has("ghost"), nodePort: this.applied.has("web-np") };
    if (cmd === "iptables-save") {
      this.latencyKubeProxyPolls++;
      return ok(out.iptablesSave(s, this.webPods(), { ...opts, measure: this.measureSvcs(null, true) }));
    }
    if (cmd === "iptables-save -c -t nat")
      return ok(
        out.iptablesSave(s, this.webPods(), {
          ...opts,
          counters: { dnsUdp: this.hostDnsQueries, natOnly: true },
        }),
      );
    if (cmd === `tc filter show dev ${s.holderDev} ingress`) return ok("");
    if (cmd === "ss -Htln sport = :30780") return ok("");
    if (a[0] === "curl" && cmd.endsWith(":30780/")) return ok("http_code=200 time_total=0.001874");
    if (cmd === "ip -o addr show") {
      const me = s.nodes.find((n) => n.name === node);
      return ok(
        [
          "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever",
          `2: cilium_host    inet ${me?.ciliumHost}/32 scope global cilium_host\\       valid_lft forever preferred_lft forever`,
          `9: eth0    inet ${me?.ip}/16 brd 172.18.255.255 scope global eth0\\       valid_lft forever preferred_lft forever`,
          "",
        ].join("\n"),
      );
    }
    if (cmd === "ip route show table all") {
      const me = s.nodes.find((n) => n.name === node);
      const lines = ["default via 172.18.0.1 dev eth0 "];
      for (const n of s.nodes) {
        if (n.name === me?.name)
          lines.push(`${n.podCidr} via ${me.ciliumHost} dev cilium_host proto kernel src ${me.ciliumHost} `);
        else
          lines.push(
            `${n.podCidr} via ${me?.ciliumHost} dev cilium_host proto kernel src ${me?.ciliumHost} mtu 1450 `,
          );
      }
      lines.push(
        `${me?.ciliumHost} dev cilium_host proto kernel scope link `,
        "172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.3 ",
        `local ${me?.ciliumHost} dev cilium_host table local proto kernel scope host src ${me?.ciliumHost} `,
        "local 172.18.0.3 dev eth0 table local proto kernel scope host src 172.18.0.3 ",
        "broadcast 172.18.255.255 dev eth0 table local proto kernel scope link src 172.18.0.3 ",
      );
      return ok(`${lines.join("\n")}\n`);
    }
    const get = /^ip route get (\S+)$/.exec(cmd);
    if (get) {
      const me = s.nodes.find((n) => n.name === node);
      if ((get[1] as string).startsWith("172.18."))
        return ok(`${get[1]} dev eth0 src ${me?.ip} uid 0 \n    cache \n`);
      return ok(`${get[1]} dev cilium_host src ${me?.ciliumHost} uid 0 \n    cache mtu 1450 \n`);
    }
    if (cmd === "cat /sys/class/net/eth0/mtu") return ok("1500\n");
    if (a[0] === "bash" && a[1] === "-c" && (a[2] ?? "").includes("/dev/udp/")) {
      // host-originated: kube-proxy mode → translated by iptables (counter moves); kpr → socket LB
      this.hostDnsQueries++;
      return ok("answered\n");
    }
    throw new Error(`scripted cluster: no answer for node ${cmd}`);
  }

  private pod(pod: string, a: string[]): ExecResult {
    const s = this.s;
    const cmd = a.join(" ");
    if (pod === "holder" && cmd === "netstat -tn") {
      const peer = s.mode === "kpr" ? `${s.holderBackend.ip}:8080` : `${s.ips.web}:80`;
      return ok(
        `Active Internet connections (w/o servers)\nProto Recv-Q Send-Q Local Address           Foreign Address         State       \ntcp        0      0 ${`${s.holder.ip}:40404`.padEnd(23)} ${peer.padEnd(23)} ESTABLISHED \n`,
      );
    }
    if (pod === s.holderBackend.name && cmd === "cat /proc/net/tcp /proc/net/tcp6") {
      // as a real agnhost shows it (recorded on the lab cluster): Go's `:8080` listener is a dual-stack IPv6
      // socket, so /proc/net/tcp is empty and the IPv4 peer is IPv4-mapped in /proc/net/tcp6
      const hex = (ip: string, port: number) =>
        `0000000000000000FFFF0000${ip
          .split(".")
          .reverse()
          .map((x) => Number(x).toString(16).padStart(2, "0").toUpperCase())
          .join("")}:${port.toString(16).padStart(4, "0").toUpperCase()}`;
      const head =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
      return ok(
        `${head}${head.replace("local_address", "local_address                         ").replace("rem_address", "remote_address                       ")}   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31871 1 0000000000000000 100 0 0 10 0\n   1: ${hex(s.holderBackend.ip, 8080)} ${hex(s.holder.ip, 40404)} 01 00000000:00000000 00:00000000 00000000     0        0 33102 1 0000000000000000 20 4 30 10 -1\n`,
      );
    }
    if (pod === "probe" && a[0] === "curl" && cmd.endsWith(`http://${s.ips.ghost}/`)) {
      return s.mode === "kpr"
        ? fail(
            7,
            `*   Trying ${s.ips.ghost}:80...\n* connect to ${s.ips.ghost} port 80 failed: No route to host\n* Failed to connect to ${s.ips.ghost} port 80 after 0 ms: Could not connect to server\n* closing connection #0\ncurl: (7) Failed to connect to ${s.ips.ghost} port 80 after 0 ms: Could not connect to server\n`,
            "http_code=000 time_total=0.000412",
          )
        : fail(
            7,
            `*   Trying ${s.ips.ghost}:80...\n* connect to ${s.ips.ghost} port 80 failed: Connection refused\n* Failed to connect to ${s.ips.ghost} port 80 after 1 ms: Could not connect to server\n* closing connection #0\ncurl: (7) Failed to connect to ${s.ips.ghost} port 80 after 1 ms: Could not connect to server\n`,
            "http_code=000 time_total=0.001187",
          );
    }
    if ((pod === "probe" || pod === "dns-client") && a[0] === "nslookup") {
      return ok(
        `Server:\t\t${s.ips.kubeDns}\nAddress:\t${s.ips.kubeDns}:53\n\n\nName:\tkubernetes.default.svc.cluster.local\nAddress: ${s.ips.kubernetes}\n\n`,
      );
    }
    if (pod === "capture" && a[0] === "sh") {
      this.captureStarted = true;
      return ok("");
    }
    if (pod === "capture" && cmd === "cat /tmp/cap.txt") {
      if (!this.captureStarted) return fail(1, "cat: can't open '/tmp/cap.txt': No such file or directory\n");
      const remote = s.coredns[0] as PodSpec;
      const w = s.nodes.find((n) => n.name === s.dnsClient.node)?.ip;
      const r = s.nodes.find((n) => n.name === remote.node)?.ip;
      return ok(
        [
          "tcpdump: data link type LINUX_SLL2",
          "tcpdump: verbose output suppressed, use -v[v]... for full protocol decode",
          "listening on any, link-type LINUX_SLL2 (Linux cooked v2), snapshot length 262144 bytes",
          `09:13:41.512203 eth0  Out IP ${w}.41374 > ${r}.8472: VXLAN, flags [I] (0x08), vni 4`,
          `IP ${s.dnsClient.ip}.43615 > ${remote.ip}.53: 51722+ A? kubernetes.default.svc.cluster.local. (54)`,
          `09:13:41.512981 eth0  In  IP ${r}.52133 > ${w}.8472: VXLAN, flags [I] (0x08), vni 6`,
          `IP ${remote.ip}.53 > ${s.dnsClient.ip}.43615: 51722*- 1/0/0 A ${s.ips.kubernetes} (106)`,
          "",
        ].join("\n"),
      );
    }
    throw new Error(`scripted cluster: no answer for pod/${pod} ${cmd}`);
  }
}
