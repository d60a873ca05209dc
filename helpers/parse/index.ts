import { parseBindProbe } from "./bind-probe.ts";
import { parseBpfCtList } from "./bpf-ct-list.ts";
import { parseBpfLbBackends } from "./bpf-lb-backends.ts";
import { parseBpfLbList, parseBpfLbListJson } from "./bpf-lb-list.ts";
import { parseBpftoolCgroup } from "./bpftool-cgroup.ts";
import { parseBpftoolNet, parseBpftoolNetJson } from "./bpftool-net.ts";
import { parseConfig } from "./config.ts";
import { parseCurlText } from "./curl.ts";
import { parseEndpointJson } from "./endpoint-json.ts";
import { parseEndpointSliceJson } from "./endpointslice-json.ts";
import { parseIpAddr } from "./ip-addr.ts";
import { parseIpRoute } from "./ip-route.ts";
import { parseIptablesSave } from "./iptables-save.ts";
import { parseMapList } from "./map-list.ts";
import { parseMetricsJson } from "./metrics-json.ts";
import { parseNetstat } from "./netstat.ts";
import { parseNftRuleset } from "./nft-ruleset.ts";
import { parseProcNetTcp } from "./proc-net-tcp.ts";
import { parseServiceList } from "./service-list.ts";
import { parseServiceListJson } from "./service-list-json.ts";
import { parseSs } from "./ss.ts";
import { parseStatus, parseStatusJson } from "./status.ts";
import { parseTcFilter } from "./tc-filter.ts";
import { parseTcpdump } from "./tcpdump.ts";

export interface FormatSpec {
  /** The command whose output this format reads. */
  command: string;
  parse: (input: string) => unknown;
}

/** Every output format the suite reads, by the name the CLI and the evidence bundle use. */
export const FORMATS: Record<string, FormatSpec> = {
  "service-list": { command: "cilium-dbg service list", parse: parseServiceList },
  "service-list-json": { command: "cilium-dbg service list -o json", parse: parseServiceListJson },
  "bpf-lb-list": { command: "cilium-dbg bpf lb list", parse: parseBpfLbList },
  "bpf-lb-list-json": { command: "cilium-dbg bpf lb list -o json", parse: parseBpfLbListJson },
  "bpf-lb-backends": { command: "cilium-dbg bpf lb list --backends", parse: parseBpfLbBackends },
  "bpf-ct-list": { command: "cilium-dbg bpf ct list global", parse: parseBpfCtList },
  status: { command: "cilium-dbg status [--verbose]", parse: parseStatus },
  "status-json": { command: "cilium-dbg status -o json", parse: parseStatusJson },
  config: { command: "cilium-dbg config -a", parse: parseConfig },
  "endpoint-json": { command: "cilium-dbg endpoint get ID -o json", parse: parseEndpointJson },
  "map-list": { command: "cilium-dbg map list", parse: parseMapList },
  "metrics-json": { command: "cilium-dbg metrics list -o json", parse: parseMetricsJson },
  "bpftool-net": { command: "bpftool net show [dev X]", parse: parseBpftoolNet },
  "bpftool-net-json": { command: "bpftool -j net show [dev X]", parse: parseBpftoolNetJson },
  "bpftool-cgroup": { command: "bpftool cgroup show PATH", parse: parseBpftoolCgroup },
  "bind-probe": { command: "timeout 2 nc -l ADDR PORT; echo exit=$? (ours)", parse: parseBindProbe },
  "tc-filter": { command: "tc filter show dev X ingress", parse: parseTcFilter },
  "iptables-save": { command: "iptables-save [-c]", parse: parseIptablesSave },
  "nft-ruleset": { command: "nft list ruleset", parse: parseNftRuleset },
  ss: { command: "ss -Htln / ss -tn", parse: parseSs },
  netstat: { command: "netstat -tn (busybox)", parse: parseNetstat },
  "proc-net-tcp": { command: "cat /proc/net/tcp", parse: parseProcNetTcp },
  "ip-route": { command: "ip route get ADDR / ip route", parse: parseIpRoute },
  "ip-addr": { command: "ip -o addr show", parse: parseIpAddr },
  tcpdump: { command: "tcpdump -nn -T vxlan udp port 8472", parse: parseTcpdump },
  "endpointslice-json": { command: "kubectl get endpointslices -o json", parse: parseEndpointSliceJson },
  curl: {
    command: "curl -w 'http_code=%{http_code} time_total=%{time_total}' (exit=N line or `curl: (N)`)",
    parse: (input) => parseCurlText(input, null),
  },
};

export const FORMAT_NAMES = Object.keys(FORMATS);
