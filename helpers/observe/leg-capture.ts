/**
 * A leg's datapath evidence on every node (issue 42: the upgrade gate says BROKEN only with proof that the datapath
 * lost the packet): a capture of every packet of the load's connections, data and the tunnel's outer packets
 * included, into a file on each node, and the agent's drop monitor beside it (manifests/load-pcap.yaml). After the
 * leg, each failed request and each broken connection is read back from every node's file by its local port, and
 * `attribute` (helpers/parse/packets.ts) says whose loss it was, quoting the lines.
 *
 * A bundle recorded before this evidence existed has none of these calls: in a replay every step here gives way
 * (null), and the gate then names what is missing instead of guessing.
 */

import { NotRecorded } from "../exec/replay.ts";
import { mustRun } from "../exec/types.ts";
import {
  type Attribution,
  attribute,
  type Conversation,
  type DropLine,
  type Packet,
  parseDropLines,
  parsePackets,
} from "../parse/packets.ts";
import { parseRequestLog, requestStats } from "../parse/requests-log.ts";
import { RawText } from "../records/evidence.ts";
import { apiJsonRaw, kubectlRaw } from "./cluster.ts";
import type { RunContext } from "./context.ts";
import { apply, renderManifest, waitPodsReady } from "./workloads.ts";

/** The tunnel's UDP port (Cilium's VXLAN default, the lab's tunnel). */
const TUNNEL_PORT = 8472;
/** The long-lived connections' fixed source ports (helpers/observe/load.ts). */
const HOLDER_PORTS = [40410, 40422] as const;
/** At most this many packets per node and leg (snap length 256: about half a GB at most, a leg takes far fewer). */
const PCAP_PACKETS = 2_000_000;
/** The failures read back per leg: each costs one read per node. */
export const ATTRIBUTED_MAX = 20;

export interface LegPcap {
  kind: string;
  /** The capture Pod on each node. */
  pods: { node: string; pod: string }[];
}

const hex = (ip: string) =>
  `0x${ip
    .split(".")
    .map((o) => Number(o).toString(16).padStart(2, "0"))
    .join("")}`;

/**
 * The capture's filter: the loop Pod's TCP packets and the long-lived connections' ports, and the VXLAN packets
 * whose inner addresses or ports are those (inner IPv4 source at UDP offset 42, destination 46, ports 50 and 52:
 * 8 bytes of UDP, 8 of VXLAN, 14 of Ethernet, a 20-byte IP header).
 */
export function pcapFilter(loopIp: string): string {
  const [lo, hi] = HOLDER_PORTS;
  const ports = (o: number) => `(udp[${o}:2] >= ${lo} and udp[${o}:2] <= ${hi})`;
  return `(tcp and (host ${loopIp} or portrange ${lo}-${hi})) or (udp port ${TUNNEL_PORT} and (udp[42:4] = ${hex(loopIp)} or udp[46:4] = ${hex(loopIp)} or ${ports(50)} or ${ports(52)}))`;
}

/** The read-back filter of one conversation: its port, plain or inside the tunnel. */
export function portFilter(port: number): string {
  return `tcp port ${port} or (udp port ${TUNNEL_PORT} and (udp[50:2] = ${port} or udp[52:2] = ${port}))`;
}

/** What gives way in a replay of a bundle recorded before this evidence: only a call it never recorded. */
function gaveWay(ctx: RunContext, err: unknown, what: string): null {
  if (ctx.replay && err instanceof NotRecorded) return null;
  if (ctx.replay) throw err;
  ctx.log(
    `${what}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)} (the gate will name it missing)`,
  );
  return null;
}

/** Starts the capture and the drop monitor on every node for one leg; null when it could not (said in the log). */
export async function startPcap(
  ctx: RunContext,
  nodes: string[],
  loopIp: string,
  kind: string,
): Promise<LegPcap | null> {
  try {
    const { json } = await apiJsonRaw(ctx, {
      resource: "daemonset",
      name: "cilium",
      namespace: "kube-system",
    });
    const containers = ((
      json.spec as { template?: { spec?: { containers?: { name?: string; image?: string }[] } } }
    )?.template?.spec?.containers ?? []) as { name?: string; image?: string }[];
    const image = containers.find((c) => c.name === "cilium-agent")?.image;
    if (!image) throw new Error("the cilium DaemonSet names no cilium-agent image");
    const pods = nodes.map((node, i) => ({ node, pod: `pcap-${kind}-${i}` }));
    await apply(
      ctx,
      pods
        .map((p) =>
          renderManifest("load-pcap.yaml", ctx.namespace, {
            NAME: p.pod,
            LEG: kind,
            NODE: p.node,
            FILTER: pcapFilter(loopIp),
            COUNT: String(PCAP_PACKETS),
            CILIUM_IMAGE: image,
          }),
        )
        .join("\n---\n"),
    );
    await waitPodsReady(ctx, `app=load-pcap,leg=${kind}`, pods.length);
    return { kind, pods };
  } catch (err) {
    return gaveWay(ctx, err, `no capture on every node for the ${kind}`);
  }
}

export interface LegEvidence {
  /** The nodes whose capture was read, and those whose drop monitor was. */
  captured: string[];
  monitored: string[];
  drops: DropLine[];
  /** Every raw output read (the captures per conversation and node, the monitors), for evidence. */
  raws: RawText[];
  /** Whose loss each conversation was, in the order asked. */
  attributions: Attribution[];
}

/**
 * Each conversation read back from every node's capture, with the drop monitors: whose loss it was. A capture
 * that cannot be read on a node leaves that node out of `captured` (and the attribution says what is missing).
 */
export async function attributeConversations(
  ctx: RunContext,
  pcap: LegPcap | null,
  nodes: string[],
  conversations: Conversation[],
): Promise<LegEvidence> {
  const none = (why: string): LegEvidence => ({
    captured: [],
    monitored: [],
    drops: [],
    raws: [],
    attributions: conversations.map(() => ({ kind: "unknown", why, lines: [] })),
  });
  if (!pcap)
    return none(
      "no capture of data packets on the client's and the backends' nodes and no drop monitor were recorded in this leg",
    );
  const raws: RawText[] = [];
  const drops: DropLine[] = [];
  const monitored: string[] = [];
  try {
    for (const p of pcap.pods) {
      const log = await kubectlRaw(ctx, ["-n", ctx.namespace, "logs", p.pod, "-c", "drops"]);
      raws.push(log);
      monitored.push(p.node);
      drops.push(...parseDropLines(p.node, log.text, log.place(1).file));
    }
  } catch (err) {
    gaveWay(ctx, err, "a drop monitor could not be read");
  }
  const captured = new Set<string>();
  const attributions: Attribution[] = [];
  for (const c of conversations.slice(0, ATTRIBUTED_MAX)) {
    const packets: Packet[] = [];
    for (const p of pcap.pods) {
      try {
        const r = await mustRun(ctx.exec, {
          target: { kind: "pod", namespace: ctx.namespace, pod: p.pod, container: "pcap" },
          argv: ["tcpdump", "-r", "/cap/leg.pcap", "-nn", "-tt", "-S", portFilter(c.port)],
          timeoutMs: 120_000,
        });
        const raw = RawText.stdout(r);
        raws.push(raw);
        captured.add(p.node);
        packets.push(...parsePackets(p.node, raw.text, raw.place(1).file));
      } catch (err) {
        gaveWay(ctx, err, `the capture on ${p.node} could not be read for port ${c.port}`);
      }
    }
    attributions.push(attribute(c, packets, drops, [...captured], nodes));
  }
  for (const _ of conversations.slice(ATTRIBUTED_MAX))
    attributions.push({
      kind: "unknown",
      why: `not read back: only the first ${ATTRIBUTED_MAX} failures of a leg are`,
      lines: [],
    });
  return { captured: [...captured], monitored, drops, raws, attributions };
}

/** The leg's capture Pods deleted (after the leg's evidence was read). */
export async function removePcap(ctx: RunContext, pcap: LegPcap | null): Promise<void> {
  if (!pcap) return;
  try {
    await mustRun(ctx.exec, {
      target: { kind: "kubectl" },
      argv: [
        "-n",
        ctx.namespace,
        "delete",
        "pod",
        "-l",
        `app=load-pcap,leg=${pcap.kind}`,
        "--wait=true",
        "--timeout=120s",
      ],
      timeoutMs: 150_000,
    });
  } catch (err) {
    gaveWay(ctx, err, "the capture Pods could not be deleted");
  }
}

/** What a leg's failures and broken connections were, attributed: by the request's local port, by connection. */
export interface LegAttribution {
  requests: Map<number, Attribution>;
  connections: Map<string, Attribution>;
  summary: { captured: string[]; monitored: string[]; drops: number };
  raws: RawText[];
}

/**
 * Every failed request of the leg's window and every long-lived connection that broke, read back from every node's
 * capture and drop monitor; then the capture Pods deleted. A request is one conversation (its local port, its
 * start to its end); a connection the 5 s before its first break to a second after.
 */
export async function attributeLeg(
  ctx: RunContext,
  pcap: LegPcap | null,
  nodes: string[],
  loop: { text: string; ip: string; node: string; from: number; to: number },
  connections: { name: string; node: string; port: number; brokeAt: string | null }[],
): Promise<LegAttribution> {
  const log = parseRequestLog(loop.text);
  const failures = requestStats(log, { from: loop.from, to: loop.to }).failures.filter(
    (f) => f.port !== undefined,
  );
  const broken = connections.filter((c) => c.brokeAt !== null);
  const conversations: Conversation[] = [
    ...failures.map((f) => ({
      clientIp: loop.ip,
      port: f.port as number,
      clientNode: loop.node,
      from: f.t / 1000,
      to: (f.t + f.ms) / 1000,
    })),
    ...broken.map((c) => {
      const at = Date.parse(c.brokeAt as string) / 1000;
      return { clientIp: "*", port: c.port, clientNode: c.node, from: at - 5, to: at + 1 };
    }),
  ];
  const ev =
    conversations.length > 0
      ? await attributeConversations(ctx, pcap, nodes, conversations)
      : { captured: pcap ? nodes : [], monitored: pcap ? nodes : [], drops: [], raws: [], attributions: [] };
  if (conversations.length === 0 && pcap) {
    // nothing failed: the monitors are still read, so a drop during the leg is on record
    const read = await attributeConversations(ctx, pcap, nodes, []);
    ev.monitored = read.monitored;
    ev.drops = read.drops;
    ev.raws = read.raws;
  }
  await removePcap(ctx, pcap);
  const requests = new Map<number, Attribution>();
  failures.forEach((f, i) => {
    const a = ev.attributions[i];
    if (a) requests.set(f.port as number, a);
  });
  const byConnection = new Map<string, Attribution>();
  broken.forEach((c, i) => {
    const a = ev.attributions[failures.length + i];
    if (a) byConnection.set(c.name, a);
  });
  return {
    requests,
    connections: byConnection,
    summary: { captured: ev.captured, monitored: ev.monitored, drops: ev.drops.length },
    raws: ev.raws,
  };
}
