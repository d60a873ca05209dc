/** A DNS A query in wire format (RFC 1035), for a host-side query that needs no dig/nslookup binary. */
export function dnsQuery(name: string, id: number): Buffer {
  const labels = name.split(".").filter(Boolean);
  const qname = Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, "ascii")])),
    Buffer.from([0]),
  ]);
  const header = Buffer.from([(id >> 8) & 255, id & 255, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, qname, Buffer.from([0, 1, 0, 1])]);
}

/**
 * A bash script that sends one UDP query to server:53 through /dev/udp (one write through dd, so it is one datagram: bash printf writes in pieces) and prints the answer's first
 * 12 bytes in hex (nothing, and a non-zero exit, when no answer comes within 2 s). Runs in a kind/k3d
 * node container, which has bash but no DNS tools.
 */
export function hostDnsScript(server: string, name: string, id: number): string {
  const bytes = [...dnsQuery(name, id)].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
  return `exec 3<>/dev/udp/${server}/53 && printf '${bytes}' | dd bs=512 count=1 iflag=fullblock status=none >&3 && timeout 2 head -c 12 <&3 | od -An -tx1 | grep -q . && echo answered`;
}
