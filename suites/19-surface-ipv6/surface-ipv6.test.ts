import { describe, expect, it } from "vitest";
import { inRange6, ipv6Big, ipv6Text, parseLb6Range } from "./surface-ipv6.topic.ts";

// addresses written by us, in the lab's kind-dual network (fd00:ca1d:101::/64)
describe("the IPv6 range of ours", () => {
  it("reads and writes IPv6 addresses as numbers, compressed or not", () => {
    expect(ipv6Big("fd00:ca1d:101::3")).toBe(ipv6Big("fd00:ca1d:0101:0:0:0:0:0003"));
    expect(ipv6Text((ipv6Big("fd00:ca1d:101::3") as bigint) + 0xedn)).toBe("fd00:ca1d:101::f0");
    expect(ipv6Text(0n)).toBe("::");
    expect(ipv6Big("::1")).toBe(1n);
    for (const bad of ["172.31.101.3", "fd00::1::2", "fd00:xyz::1", "1:2:3:4:5:6:7", "::ffff:1.2.3.4"])
      expect(ipv6Big(bad)).toBeNull();
  });

  it("LB_IP6_RANGE: the pool is START to STOP less one, the externalIP STOP; else one line saying why", () => {
    expect(parseLb6Range("fd00:ca1d:101::f0-fd00:ca1d:101::f8")).toEqual({
      start: "fd00:ca1d:101::f0",
      stop: "fd00:ca1d:101::f7",
      externalIp: "fd00:ca1d:101::f8",
    });
    expect(parseLb6Range(" FD00:CA1D:101::F0 - fd00:ca1d:101::f2 ")).toEqual({
      start: "fd00:ca1d:101::f0",
      stop: "fd00:ca1d:101::f1",
      externalIp: "fd00:ca1d:101::f2",
    });
    expect(parseLb6Range("172.31.101.240-172.31.101.248")).toMatch(
      /is not START-STOP \(two IPv6 addresses\)/,
    );
    expect(parseLb6Range("fd00::1-fd00::2")).toMatch(/must hold 3 to 256 addresses/);
    expect(parseLb6Range("fd00::1-fd00::1:0")).toMatch(/must hold 3 to 256 addresses/);
  });

  it("inRange6 holds the pool's ends and nothing past them", () => {
    const pool = "fd00:ca1d:101::f0-fd00:ca1d:101::f7";
    expect(inRange6("fd00:ca1d:101::f0", pool)).toBe(true);
    expect(inRange6("fd00:ca1d:101::f7", pool)).toBe(true);
    expect(inRange6("fd00:ca1d:101::f8", pool)).toBe(false);
    expect(inRange6("fd00:ca1d:102::f1", pool)).toBe(false);
    expect(inRange6("172.31.101.240", pool)).toBe(false);
  });
});
