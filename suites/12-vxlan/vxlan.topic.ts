/**
 * Topic "vxlan" — The notebook, §8.
 * On the wire: the tunnel carries the query to the backend Pod's address, never to the ClusterIP.
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
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { parseTcpdump, type TcpdumpOutput } from "../../helpers/parse/tcpdump.ts";
import { ipOf, NB } from "../../helpers/properties/sources.ts";
import { derive, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet, VxlanRecord } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

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
      for: "queries that cross the tunnel",
    },
  ],
  builds: ["vxlan"],
  observe: observeVxlan,
  properties: [
    {
      id: "vxlan.backend-inside-tunnel",
      claim:
        "Inside the VXLAN tunnel the inner destination is the backend Pod IP, never the ClusterIP: translation happens before encapsulation",
      source: NB("§8"),
      expect: { kpr: { eq: "backend only" }, "kube-proxy": { eq: "backend only" } },
      config: {
        // the capture is of VXLAN (udp 8472): geneve (6081) and native routing (no tunnel) are not modelled here
        assumes: {
          kpr: { routing: ["tunnel"], tunnelProtocol: ["vxlan"] },
          "kube-proxy": { routing: ["tunnel"], tunnelProtocol: ["vxlan"] },
        },
      },
      needs: ["vxlan"],
      observe: (r) => {
        const v = r.get("vxlan");
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

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Notebook §8. */
export async function observeVxlan(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp, remote } = await clientAndRemote(ctx);
  // native routing has no tunnel to capture: the property is not applicable there (its config), and the
  // capture would only wait for packets that never come
  const config = ctx.earlierRecords().config;
  if (config?.record.routing.value === "native") {
    ctx.log("routing native: no VXLAN tunnel to capture");
    return {
      vxlan: {
        record: {
          cluster_ip: dnsIp,
          backend: formatEndpoint(remote?.ip ?? "", 53),
          packets: 0,
          inner_destinations: [],
        },
        evidence: {
          packets: [
            derive(
              "routing native (the config topic's record): no tunnel, nothing captured",
              config.record.routing.evidence,
            ),
          ],
        },
      },
    };
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
