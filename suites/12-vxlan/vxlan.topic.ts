/**
 * Topic "vxlan" — The notebook, §8.
 * On the wire: the tunnel carries the query to the backend Pod's address, never to the ClusterIP. With native
 * routing there is no tunnel, and the topic proves the opposite claim: the query crosses the wire as the Pod's
 * own packet, unencapsulated, addressed to the backend Pod — still translated before it leaves the node.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { type RunContext, waitFor } from "../../helpers/observe/context.ts";
import {
  apply,
  clientAndRemote,
  DNS_NAME,
  renderManifest,
  waitPodReady,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint, isIp } from "../../helpers/parse/address.ts";
import { type IpRouteOutput, parseIpRoute } from "../../helpers/parse/ip-route.ts";
import { parseTcpdump, type TcpdumpOutput } from "../../helpers/parse/tcpdump.ts";
import { ipOf, NB } from "../../helpers/properties/sources.ts";
import { derive, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { VxlanRecord } from "./vxlan.records.ts";
import { records } from "./vxlan.records.ts";

/** The native-routing value of the property: the query crossed the wire as the Pod sent it, to the backend. */
const ON_THE_WIRE = "backend on the wire, not encapsulated";

export const topic = defineTopic({
  name: "vxlan",
  title: "On the wire: the tunnel carries the query to the backend Pod's address, never to the ClusterIP",
  source: NB("§8"),
  deploys: ["dns-client.yaml", "capture.yaml"],
  steps: [
    {
      on: "pod",
      run: "sh -c rm -f /tmp/cap.txt; (timeout 20 tcpdump",
      for: "a capture on the node (hostNetwork Pod)",
    },
    { on: "pod", run: "cat /tmp/cap.txt", for: "the capture so far (polled)" },
    {
      on: "pod",
      run: "nslookup kubernetes.default.svc.cluster.local <ip>",
      for: "queries that cross the tunnel (or, with native routing, the wire)",
    },
    {
      on: "pod",
      run: "ip route get <ip>",
      for: "native routing: the device the route to the backend Pod leaves by",
    },
    {
      on: "pod",
      run: "sh -c rm -f /tmp/cap.txt; (timeout 20 tcpdump -l -nn -i <dev> udp and",
      for: "native routing: a capture of the client's queries and of any tunnel packet on that device",
    },
  ],
  records,
  schedule: {
    after: ["host-routing", "program"],
    why: "its capture is judged on the query's inner destination (never the ClusterIP, the backend present), not on every packet, so other topics' traffic beside it does not change the verdict; dns-client after host-routing made it; and after program, which counts the reverse socket map whole: with socket LB each of dns-client's queries is a translated socket with an entry of its own (a lab run, not shipped, recorded 3 where the holder's alone is 1, vxlan beside program)",
  },
  observe: observeVxlan,
  properties: [
    {
      id: "vxlan.backend-inside-tunnel",
      claim:
        "Inside the VXLAN tunnel the inner destination is the backend Pod IP, never the ClusterIP: translation happens before encapsulation",
      source: NB("§8"),
      expect: { kpr: { eq: "backend only" }, "kube-proxy": { eq: "backend only" } },
      config: {
        // the capture is of VXLAN (udp 8472): geneve (6081) is not modelled here
        assumes: {
          kpr: { routing: ["tunnel"], tunnelProtocol: ["vxlan"] },
          "kube-proxy": { routing: ["tunnel"], tunnelProtocol: ["vxlan"] },
        },
        cases: [
          {
            when: { routing: ["native"] },
            expect: { kpr: { eq: ON_THE_WIRE }, "kube-proxy": { eq: ON_THE_WIRE } },
            claim:
              "With native routing there is no tunnel: the query leaves the client's node as the Pod's own packet, not encapsulated, addressed to the backend Pod IP, never to the ClusterIP (translated before it leaves: socket LB or bpf_lxc with kpr, kube-proxy's DNAT beside kube-proxy)",
            why: "Cilium docs, network/concepts/routing.rst (Native-Routing): packets not addressed to a local endpoint are handed to the Linux routing subsystem as if a local process had sent them, no encapsulation; the translation happens in the Pod's namespace or at its veth (the holder and translation topics), before routing",
          },
        ],
      },
      needs: ["vxlan"],
      observe: (r) => {
        const v = r.get("vxlan");
        if (v.wire) return { value: onTheWire(v), evidence: r.evidence("vxlan", "wire") };
        const ips = v.inner_destinations.map(ipOf);
        const value =
          v.packets === 0
            ? "no tunnel packets"
            : ips.includes(v.cluster_ip)
              ? "ClusterIP inside tunnel"
              : ips.includes(ipOf(v.backend))
                ? "backend only"
                : `other (${ips.join(",")})`;
        return { value, evidence: r.evidence("vxlan", "inner_destinations") };
      },
    },
  ],
});

/** Native routing: what the client's queries looked like on the node's wire device. */
function onTheWire(v: VxlanRecord): string {
  const w = v.wire;
  if (!w) return "not captured";
  const ips = w.destinations.map(ipOf);
  if (w.encapsulated > 0) return `encapsulated (${w.encapsulated} tunnel packets on ${w.device})`;
  if (w.packets === 0) return `no query on ${w.device}`;
  if (ips.includes(v.cluster_ip)) return "ClusterIP on the wire";
  if (ips.includes(ipOf(v.backend))) return ON_THE_WIRE;
  return `other (${ips.join(",")})`;
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Notebook §8. */
export async function observeVxlan(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp, remote } = await clientAndRemote(ctx);
  // native routing has no tunnel: the queries are captured on the wire device instead (the opposite claim)
  const config = ctx.earlierRecords().config;
  if (config?.record.routing.value === "native") {
    ctx.log("routing native: capturing the queries on the wire, not in a tunnel");
    return { vxlan: await observeWire(ctx, { client, dnsIp, remote }) };
  }
  if (!remote)
    throw new Error(`no ready CoreDNS Pod outside ${client.node}: no query would cross the tunnel`);
  await apply(ctx, renderManifest("capture.yaml", ctx.namespace, { NODE: client.node }));
  await waitPodReady(ctx, "capture");
  const inCapture = (argv: string[]) =>
    ctx.exec.run({ target: { kind: "pod", namespace: ctx.namespace, pod: "capture" }, argv });
  await inCapture([
    "sh",
    "-c",
    "rm -f /tmp/cap.txt; (timeout 20 tcpdump -l -nn -i any -T vxlan udp port 8472 > /tmp/cap.txt 2>&1 &)",
  ]);
  await waitFor(ctx, {
    what: "tcpdump to start listening",
    deadlineMs: 10_000,
    intervalMs: 300,
    probe: async () => (await inCapture(["cat", "/tmp/cap.txt"])).stdout,
    done: (t) => t.includes("listening on"),
    show: (t) => t.trim() || "(no output yet)",
  });
  for (let i = 0; i < 10; i++) {
    await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "dns-client" },
      argv: ["nslookup", DNS_NAME, dnsIp],
    });
  }
  const { value: capture } = await waitFor(ctx, {
    what: `VXLAN packets carrying queries to ${remote.ip}`,
    deadlineMs: 15_000,
    intervalMs: 500,
    probe: async () => read(RawText.stdout(await inCapture(["cat", "/tmp/cap.txt"])), parseTcpdump),
    done: (c) => c.parsed.packets.some((p) => p.inner?.dst.startsWith(`${remote.ip}:`)),
    show: (c) => `${c.parsed.packets.length} tunnel packets`,
  });
  return { vxlan: buildVxlanRecord({ clusterIp: dnsIp, backend: formatEndpoint(remote.ip, 53), capture }) };
}

/** A device name as `ip route get` prints it, safe to pass to a shell. */
const DEVICE = /^[A-Za-z0-9_.@-]{1,15}$/;

/**
 * Native routing: the route to the backend Pod names the device its packets leave by; a capture there of the
 * client Pod's queries (UDP to port 53 from its address) and of any tunnel packet (UDP 8472), while the client
 * queries the ClusterIP.
 */
async function observeWire(
  ctx: RunContext,
  input: Pick<Awaited<ReturnType<typeof clientAndRemote>>, "client" | "dnsIp" | "remote">,
): Promise<Evidenced<VxlanRecord>> {
  const { client, dnsIp, remote } = input;
  if (!remote) throw new Error(`no ready CoreDNS Pod outside ${client.node}: no query would cross the wire`);
  if (!isIp(client.ip)) throw new Error(`dns-client has no Pod IP (${JSON.stringify(client.ip)})`);
  await apply(ctx, renderManifest("capture.yaml", ctx.namespace, { NODE: client.node }));
  await waitPodReady(ctx, "capture");
  const inCapture = (argv: string[]) =>
    ctx.exec.run({ target: { kind: "pod", namespace: ctx.namespace, pod: "capture" }, argv });
  const route = read(RawText.stdout(await inCapture(["ip", "route", "get", remote.ip])), parseIpRoute);
  const device = route.parsed.routes[0]?.dev ?? "";
  if (!DEVICE.test(device))
    throw new Error(
      `the route to ${remote.ip} names no device to capture on: ${route.raw.text.trim() || "(no output)"}`,
    );
  await inCapture([
    "sh",
    "-c",
    `rm -f /tmp/cap.txt; (timeout 20 tcpdump -l -nn -i ${device} udp and '((dst port 53 and src host ${client.ip}) or port 8472)' > /tmp/cap.txt 2>&1 &)`,
  ]);
  await waitFor(ctx, {
    what: "tcpdump to start listening",
    deadlineMs: 10_000,
    intervalMs: 300,
    probe: async () => (await inCapture(["cat", "/tmp/cap.txt"])).stdout,
    done: (t) => t.includes("listening on"),
    show: (t) => t.trim() || "(no output yet)",
  });
  for (let i = 0; i < 10; i++) {
    await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "dns-client" },
      argv: ["nslookup", DNS_NAME, dnsIp],
    });
  }
  const { value: capture } = await waitFor(ctx, {
    what: `the client's queries on ${device}`,
    deadlineMs: 15_000,
    intervalMs: 500,
    probe: async () => read(RawText.stdout(await inCapture(["cat", "/tmp/cap.txt"])), parseTcpdump),
    done: (c) =>
      c.parsed.packets.some((p) => p.outer.dst.startsWith(`${remote.ip}:`) || isTunnelPort(p.outer.dst)),
    show: (c) => `${c.parsed.packets.length} packets`,
  });
  return buildWireRecord({
    clusterIp: dnsIp,
    backend: formatEndpoint(remote.ip, 53),
    device,
    route,
    capture,
  });
}

const isTunnelPort = (dst: string) => /:(8472|4789|6081)$/.test(dst);

/** Native routing: the client's queries as they crossed the wire device, and any tunnel packet with them. */
export function buildWireRecord(input: {
  clusterIp: string;
  backend: string;
  device: string;
  route: Read<IpRouteOutput>;
  capture: Read<TcpdumpOutput>;
}): Evidenced<VxlanRecord> {
  const packets = input.capture.parsed.packets;
  const tunnel = packets.filter((p) => isTunnelPort(p.outer.dst));
  const queries = packets.filter((p) => !isTunnelPort(p.outer.dst) && /:53$/.test(p.outer.dst));
  const destinations = [...new Set(queries.map((p) => p.outer.dst))].sort();
  const raw = input.capture.raw;
  const routeLine = input.route.parsed.routes[0]?.line;
  return {
    record: {
      cluster_ip: input.clusterIp,
      backend: input.backend,
      packets: tunnel.length,
      inner_destinations: [],
      wire: { device: input.device, packets: queries.length, encapsulated: tunnel.length, destinations },
    },
    evidence: {
      packets: [derive(`${tunnel.length} tunnel packets on ${input.device}`, raw)],
      wire: [
        ...(routeLine ? [input.route.raw.quote(routeLine)] : []),
        ...tunnel.slice(0, 1).map((p) => raw.quote(p.line)),
        ...destinations.flatMap((d) => {
          const p = queries.find((x) => x.outer.dst === d);
          return p ? [raw.quote(p.line)] : [];
        }),
        ...(queries.length === 0 ? [derive(`no query from the client on ${input.device}`, raw)] : []),
      ],
    },
  };
}

/** Notebook §8: inner destinations of the tunnel packets of a Pod's queries (each shown by its first packet). */
export function buildVxlanRecord(input: {
  clusterIp: string;
  backend: string;
  capture: Read<TcpdumpOutput>;
}): Evidenced<VxlanRecord> {
  const inner = input.capture.parsed.packets.filter((p) => p.inner?.proto === "IP");
  const destinations = [...new Set(inner.map((p) => p.inner?.dst as string))].sort();
  const raw = input.capture.raw;
  return {
    record: {
      cluster_ip: input.clusterIp,
      backend: input.backend,
      packets: inner.length,
      inner_destinations: destinations,
    },
    evidence: {
      packets: [derive(`${inner.length} tunnel packets with an inner IP frame`, raw)],
      inner_destinations:
        destinations.length > 0
          ? destinations.flatMap((d) => {
              const p = inner.find((x) => x.inner?.dst === d);
              return p ? [raw.quote(p.line), ...(p.innerLine ? [raw.quote(p.innerLine)] : [])] : [];
            })
          : [derive("no tunnel packet with an inner IP frame", raw)],
    },
  };
}
