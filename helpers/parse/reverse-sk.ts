/**
 * `bpftool -p map dump pinned /sys/fs/bpf/tc/globals/cilium_lb4_reverse_sk` (issue 35: count the holder's entry, not
 * the node's). Each entry maps a translated socket (its cookie, and the backend it was sent to) to the frontend it
 * asked for (bpf/lib/lb.h: struct ipv4_revnat_tuple { __u64 cookie; __be32 address; __be16 port; __u16 pad; } →
 * struct ipv4_revnat_entry { __be32 address; __be16 port; __u16 rev_nat_index; }). With BTF bpftool prints the
 * fields by name (the addresses as the integers their network-order bytes make on a little-endian host); without
 * it, the bytes as hex strings. Both are read; anything else is refused naming its line.
 */
import { ParseError } from "../errors.ts";

export interface ReverseSkEntry {
  cookie: string;
  /** The backend the socket was translated to, and the frontend it had asked for (`ip:port`). */
  backend: string;
  frontend: string;
  revNat: number;
  /** The entry's index in the dump (its JSON path is [index]). */
  index: number;
}

const FORMAT = "bpftool map dump (cilium_lb4_reverse_sk)";

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** An __be32 read as a little-endian host's integer → dotted quad. */
const beIp = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255].join(".");
/** An __be16 read as a little-endian host's integer → the port. */
const bePort = (n: number) => ((n & 255) << 8) | ((n >>> 8) & 255);

function bytes(v: Json, n: number, what: string): number[] {
  if (
    !Array.isArray(v) ||
    v.length !== n ||
    !v.every((b) => typeof b === "string" && /^0x[0-9a-f]{1,2}$/i.test(b))
  )
    throw new ParseError(FORMAT, 1, JSON.stringify(v).slice(0, 120), `${what}: not ${n} hex bytes`);
  return v.map((b) => Number.parseInt(b as string, 16));
}

function entry(e: Json, index: number): ReverseSkEntry {
  if (!isObj(e))
    throw new ParseError(FORMAT, 1, JSON.stringify(e).slice(0, 120), "an entry is not an object");
  const { key, value } = e;
  if (isObj(key) && isObj(value)) {
    const num = (o: Record<string, Json>, k: string) => {
      const v = o[k];
      if (typeof v !== "number" && !(typeof v === "string" && /^\d+$/.test(v)))
        throw new ParseError(FORMAT, 1, JSON.stringify(o).slice(0, 120), `no number ${k}`);
      return Number(v);
    };
    return {
      cookie: String(key.cookie),
      backend: `${beIp(num(key, "address"))}:${bePort(num(key, "port"))}`,
      frontend: `${beIp(num(value, "address"))}:${bePort(num(value, "port"))}`,
      revNat: num(value, "rev_nat_index"),
      index,
    };
  }
  const k = bytes(key, 16, "key");
  const v = bytes(value, 8, "value");
  const cookie = k.slice(0, 8).reduceRight((a, b) => a * 256n + BigInt(b), 0n);
  return {
    cookie: cookie.toString(),
    backend: `${k.slice(8, 12).join(".")}:${((k[12] as number) << 8) | (k[13] as number)}`,
    frontend: `${v.slice(0, 4).join(".")}:${((v[4] as number) << 8) | (v[5] as number)}`,
    revNat: (v[6] as number) | ((v[7] as number) << 8),
    index,
  };
}

export function parseReverseSkDump(text: string): ReverseSkEntry[] {
  const t = text.trim();
  if (t === "") return [];
  let json: Json;
  try {
    json = JSON.parse(t);
  } catch (err) {
    throw new ParseError(FORMAT, 1, t.split("\n")[0] ?? "", `not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(json)) throw new ParseError(FORMAT, 1, t.split("\n")[0] ?? "", "not a list of entries");
  return json.map(entry);
}
