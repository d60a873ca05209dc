import { describe, expect, it } from "vitest";
import { parseReverseSkDump } from "./reverse-sk.ts";

// written by us after bpf/lib/lb.h's structs: the holder (cookie 4097) sent to backend 10.244.2.7:8080 for web's
// ClusterIP 10.96.44.2:80 (rev NAT 5), as bpftool prints it with BTF and without
describe("cilium_lb4_reverse_sk as bpftool dumps it", () => {
  it("reads the BTF form (addresses and ports as a little-endian host reads network-order bytes)", () => {
    const be32 = (ip: string) => ip.split(".").reduce((n, b, i) => n + Number(b) * 256 ** i, 0);
    const be16 = (p: number) => ((p & 255) << 8) | (p >> 8);
    const text = JSON.stringify(
      [
        {
          key: { cookie: 4097, address: be32("10.244.2.7"), port: be16(8080), pad: 0 },
          value: { address: be32("10.96.44.2"), port: be16(80), rev_nat_index: 5 },
        },
      ],
      null,
      4,
    );
    expect(parseReverseSkDump(text)).toEqual([
      { cookie: "4097", backend: "10.244.2.7:8080", frontend: "10.96.44.2:80", revNat: 5, index: 0 },
    ]);
  });

  it("reads the raw byte form", () => {
    const hex = (xs: number[]) => xs.map((x) => `0x${x.toString(16).padStart(2, "0")}`);
    const text = JSON.stringify([
      {
        key: hex([1, 16, 0, 0, 0, 0, 0, 0, 10, 244, 2, 7, 0x1f, 0x90, 0, 0]),
        value: hex([10, 96, 44, 2, 0, 80, 5, 0]),
      },
    ]);
    expect(parseReverseSkDump(text)).toEqual([
      { cookie: "4097", backend: "10.244.2.7:8080", frontend: "10.96.44.2:80", revNat: 5, index: 0 },
    ]);
  });

  it("an empty map is no entry; anything else is refused naming what is wrong", () => {
    expect(parseReverseSkDump("[]\n")).toEqual([]);
    expect(parseReverseSkDump("")).toEqual([]);
    expect(() => parseReverseSkDump('[{"key": [1,2]}]')).toThrow(/key: not 16 hex bytes/);
    expect(() => parseReverseSkDump("Error: bpf obj get")).toThrow(/not JSON/);
  });
});
