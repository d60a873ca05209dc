/**
 * Whose loss is a failed request or a broken connection (issue 42: BROKEN only with datapath evidence)? The leg's
 * captures on every node (tcpdump -i any -nn -tt -S, data packets and the tunnel's outer packets included, read
 * back per local port) say where each packet of the connection was seen and when; the drop monitor beside them says
 * what the datapath dropped. A pure function of those lines answers, in order:
 *
 * - `datapath`: a drop of this connection, an RST toward the client that no backend sent, a packet that left a
 *   node and never arrived at the next, one that arrived at a node and was not passed on, or one held over
 *   HELD_MS between two nodes: the datapath lost or held it, and the line that shows it is quoted;
 * - `client`: every packet was delivered (the answer reached the client's node before its timeout): the
 *   datapath did its part;
 * - `backend`: the request was handed to the backend Pod and acknowledged at once, and its answer left the backend
 *   late (after the client's timeout, or HELD_MS or more) or never: the datapath did its part, the backend held it;
 * - `unknown`: the capture cannot tell (nothing of it captured, or only where a local delivery is invisible),
 *   named, so the gate says INCONCLUSIVE and what is missing.
 */

/** A packet held this long between two nodes (or between a node's arrival and its delivery) is the datapath's. */
export const HELD_MS = 500;

export interface Packet {
  /** Seconds since the epoch (tcpdump -tt). */
  t: number;
  node: string;
  iface: string;
  dir: string;
  src: string;
  sport: number;
  dst: string;
  dport: number;
  flags: string;
  /** `-S` absolute sequence range (`seq A:B`) or the SYN's `seq A`; null when the line has none. */
  seq: string | null;
  length: number;
  /** Seen inside the tunnel's outer packet (the node's uplink: it left or entered the node encapsulated). */
  outer: boolean;
  /** The line (joined with its inner line for an encapsulated packet) and its place. */
  line: string;
  at: string;
}

const HEAD = /^(\d{9,}\.\d+)\s+(\S+)\s+(In|Out|M|P|B|ifindex)\b/;
const TCP = /IP6? (\S+)\.(\d+) > (\S+)\.(\d+): Flags \[([^\]]*)\](?:, seq (\d+(?::\d+)?))?.*?length (\d+)/;

/**
 * One node's capture text as packets. An encapsulated packet is printed as its outer line (`… > x.8472: OTV, …`)
 * followed by the inner packet on the same line or the next one: both are read as the inner packet, marked outer.
 */
export function parsePackets(node: string, text: string, file = "capture"): Packet[] {
  const out: Packet[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const head = HEAD.exec(line);
    if (!head) continue;
    let whole = line;
    const lineNo = i + 1;
    const encapsulated = /\.(?:8472|4789|6081): (?:OTV|VXLAN|Geneve)/.test(line);
    if (encapsulated && !TCP.test(line.slice(line.indexOf(": ") + 2))) {
      const next = lines[i + 1] ?? "";
      if (!HEAD.test(next)) {
        whole = `${line} | ${next.trim()}`;
        i++;
      }
    }
    const inner = encapsulated ? whole.slice(whole.search(/(?:OTV|VXLAN|Geneve)/)) : whole;
    const tcp = TCP.exec(inner);
    if (!tcp) continue;
    out.push({
      t: Number(head[1]),
      node,
      iface: head[2] as string,
      dir: head[3] as string,
      src: tcp[1] as string,
      sport: Number(tcp[2]),
      dst: tcp[3] as string,
      dport: Number(tcp[4]),
      flags: tcp[5] as string,
      seq: tcp[6] ?? null,
      length: Number(tcp[7]),
      outer: encapsulated,
      line: whole.trim(),
      at: `${file}:${lineNo}`,
    });
  }
  return out;
}

export interface DropLine {
  /** Seconds since the epoch (the monitor's line prefixed with `date +%s.%N`). */
  t: number;
  node: string;
  line: string;
  at: string;
}

/** The drop monitor's lines (`<epoch.ns> xx drop (<reason>) … <src>:<port> -> <dst>:<port> tcp …`). */
export function parseDropLines(node: string, text: string, file = "drops"): DropLine[] {
  const out: DropLine[] = [];
  text.split("\n").forEach((l, i) => {
    const m = /^(\d{9,}(?:\.\d+)?)\s+(.*\bdrop\b.*)$/i.exec(l.trim());
    if (m) out.push({ t: Number(m[1]), node, line: m[2] as string, at: `${file}:${i + 1}` });
  });
  return out;
}

export interface Attribution {
  /** Whose loss it was: the datapath's, the client's, the backend's (delivered, answered late or never), unknown. */
  kind: "datapath" | "client" | "backend" | "unknown";
  /** In words: where the packet was last seen, or what is missing. */
  why: string;
  /** The capture or monitor lines that show it (`file:line  text`), at most six. */
  lines: string[];
}

export interface Conversation {
  /** The client's address and port (the loop's Pod and the request's local port, or a holder's socket). */
  clientIp: string;
  port: number;
  /** The node the client runs on. */
  clientNode: string;
  /** The failure's window (seconds since the epoch): the request's start to its end (timeout), or a break's. */
  from: number;
  to: number;
}

const show = (p: { at: string; line: string }) => `${p.at}  ${p.line}`.slice(0, 400);
const ms = (s: number) => Math.round(s * 1000);

/**
 * Where the conversation's packets went, from every node's capture and drop monitor (see the module comment).
 * `captured` lists the nodes whose capture was read, `nodes` every node: a packet is "never seen arriving" only when
 * every node was captured (a node without a capture makes a silence there unknowable).
 */
export function attribute(
  c: Conversation,
  packets: Packet[],
  drops: DropLine[],
  captured: string[],
  nodes: string[] = captured,
): Attribution {
  const everyNode = nodes.every((n) => captured.includes(n));
  // `*`: any address with the conversation's port (a holder's own port, which no other socket of the load uses)
  const ip = (a: string) => c.clientIp === "*" || a === c.clientIp;
  const mine = packets.filter(
    (p) =>
      p.t >= c.from - 1 &&
      p.t <= c.to + 1 &&
      ((ip(p.src) && p.sport === c.port) || (ip(p.dst) && p.dport === c.port)),
  );
  const dropped = drops.filter(
    (d) =>
      d.t >= c.from - 1 &&
      d.t <= c.to + 1 &&
      (c.clientIp === "*"
        ? new RegExp(`:${c.port}\\b`).test(d.line)
        : d.line.includes(`${c.clientIp}:${c.port}`)),
  );
  if (dropped[0])
    return {
      kind: "datapath",
      why: `the datapath dropped it on ${dropped[0].node}: ${dropped[0].line.slice(0, 200)}`,
      lines: dropped.slice(0, 6).map(show),
    };
  if (!captured.includes(c.clientNode))
    return { kind: "unknown", why: `no capture on the client's node ${c.clientNode}`, lines: [] };
  if (mine.length === 0)
    return {
      kind: "unknown",
      why: `no packet of ${c.clientIp}:${c.port} in the captures of ${captured.join(", ")} during the failure`,
      lines: [],
    };
  const fromClient = (p: Packet) => ip(p.src) && p.sport === c.port;
  // the client's own interface: where its packets enter its node
  const clientIface = mine.find((p) => fromClient(p) && p.node === c.clientNode && p.dir === "In")?.iface;
  const rst = mine.find((p) => !fromClient(p) && p.flags.includes("R"));
  if (rst) {
    const origin = mine.find(
      (p) =>
        !fromClient(p) &&
        p.flags.includes("R") &&
        p.seq === rst.seq &&
        p.iface !== clientIface &&
        p.dir === "In",
    );
    if (!origin)
      return {
        kind: "datapath",
        why: `an RST toward the client that no backend was seen sending: first seen at ${rst.iface} ${rst.dir} on ${rst.node}`,
        lines: [show(rst)],
      };
  }
  // the conversation's packets by identity (direction and sequence range), each with where it was seen
  const sightings = new Map<string, Packet[]>();
  for (const p of mine) {
    if (p.seq === null || (p.length === 0 && !p.flags.includes("S"))) continue;
    const key = `${fromClient(p) ? ">" : "<"} ${p.seq}`;
    sightings.set(key, [...(sightings.get(key) ?? []), p]);
  }
  const nodesOf = (ps: Packet[]) => [...new Set(ps.map((p) => p.node))];
  for (const [key, seen] of sightings) {
    const out = key.startsWith(">");
    const first = seen[0] as Packet;
    const leftNode = seen.filter((p) => p.outer && p.dir === "Out");
    const arrived = seen.filter((p) => p.outer && p.dir === "In");
    // left a node encapsulated, and no other node saw it (every node captured)
    if (leftNode.length > 0 && arrived.length === 0 && everyNode && nodes.length > 1) {
      const from = leftNode[0] as Packet;
      return {
        kind: "datapath",
        why: `${out ? "the request" : "the answer"} left ${from.node} through the tunnel at ${new Date(ms(from.t)).toISOString()} and no other node saw it arrive`,
        lines: [show(first), show(from)],
      };
    }
    if (leftNode[0] && arrived[0]) {
      const held = ms(arrived[0].t - leftNode[0].t);
      if (held >= HELD_MS)
        return {
          kind: "datapath",
          why: `${out ? "the request" : "the answer"} was held ${held} ms between ${leftNode[0].node} (left ${new Date(ms(leftNode[0].t)).toISOString()}) and ${arrived[0].node} (arrived ${new Date(ms(arrived[0].t)).toISOString()})`,
          lines: [show(leftNode[0]), show(arrived[0])],
        };
    }
    // arrived at the client's node and was not delivered to it (its interface, Out), within the window
    if (!out && clientIface) {
      const atNode = seen.filter((p) => p.node === c.clientNode);
      const delivered = atNode.find((p) => p.iface === clientIface && p.dir === "Out");
      const reached = atNode[0];
      if (reached && delivered && ms(delivered.t - reached.t) >= HELD_MS)
        return {
          kind: "datapath",
          why: `the answer reached ${c.clientNode} at ${new Date(ms(reached.t)).toISOString()} and was delivered to the client ${ms(delivered.t - reached.t)} ms later`,
          lines: [show(reached), show(delivered)],
        };
    }
  }
  const answers = mine.filter((p) => !fromClient(p) && p.length > 0);
  const delivered = answers.find(
    (p) => p.node === c.clientNode && p.iface === clientIface && p.dir === "Out",
  );
  if (delivered && delivered.t <= c.to)
    return {
      kind: "client",
      why: `the answer was delivered to the client at ${new Date(ms(delivered.t)).toISOString()}, before its timeout: the datapath did its part`,
      lines: [show(delivered)],
    };
  // the request handed to the backend Pod (out of the node on an lxc device that is not the client's) and the
  // backend's TCP stack acknowledging it, then its answer leaving the backend Pod late or never: the datapath
  // delivered it; the backend held the answer (run up-119-120-kpr-r1's restart leg: delivered and acknowledged in
  // 6 µs, answered 2455 ms later, after the client's 2 s timeout)
  const lxc = (p: Packet) => p.iface.startsWith("lxc");
  const isClientIface = (p: Packet) => p.node === c.clientNode && p.iface === clientIface;
  const handed = mine.find(
    (p) => fromClient(p) && p.length > 0 && lxc(p) && p.dir === "Out" && !isClientIface(p),
  );
  const acked = handed
    ? mine.find((p) => !fromClient(p) && lxc(p) && p.dir === "In" && p.t >= handed.t && !isClientIface(p))
    : undefined;
  if (handed && acked) {
    const answered = answers.find((p) => lxc(p) && p.dir === "In" && p.t >= handed.t && !isClientIface(p));
    const late = answered ? ms(answered.t - handed.t) : null;
    if (!answered || answered.t > c.to || (late !== null && late >= HELD_MS))
      return {
        kind: "backend",
        why: answered
          ? `the request was handed to the backend Pod on ${handed.node} at ${new Date(ms(handed.t)).toISOString()} and acknowledged at once; its answer left the backend only ${late} ms later${answered.t > c.to ? ", after the client's timeout" : ""}: the datapath delivered it, the backend held the answer`
          : `the request was handed to the backend Pod on ${handed.node} at ${new Date(ms(handed.t)).toISOString()} and acknowledged at once; no answer left the backend: the datapath delivered it, the backend did not answer`,
        lines: [show(handed), show(acked), ...(answered ? [show(answered)] : [])],
      };
  }
  const seenOn = nodesOf(mine).join(", ");
  return {
    kind: "unknown",
    why: `the captures (${captured.join(", ")}) show no packet lost, held or reset by the datapath, and no answer delivered (seen on ${seenOn}; a delivery into a Pod by BPF redirect is not visible to tcpdump)`,
    lines: mine.slice(0, 4).map(show),
  };
}
