import { describe, expect, it } from "vitest";
import { parseIptablesSave } from "./iptables-save.ts";
import { u64, u64Compare, u64Diff, u64Sum } from "./u64.ts";

describe("64-bit values (written by us)", () => {
  it("numbers while exact, the printed decimal beyond 2^53", () => {
    expect(u64("9007199254740991")).toBe(9007199254740991);
    expect(u64("9007199254740992")).toBe("9007199254740992");
    expect(u64("18446744073709551615")).toBe("18446744073709551615");
    expect(u64("007")).toBe(7);
  });

  it("sums, differences and comparisons are exact", () => {
    expect(u64Sum("9007199254740991", "2")).toBe("9007199254740993");
    expect(u64Diff("18446744073709551615", "18446744073709551610")).toBe(5);
    expect(u64Diff(10, 4)).toBe(6);
    expect(u64Compare("18446744073709551615", "18446744073709551614")).toBe(1);
    expect(u64Compare(3, "9007199254740993")).toBeLessThan(0);
  });

  it("iptables-save -c counters above 2^53 keep their value", () => {
    const save = parseIptablesSave(
      [
        "*nat",
        ":KUBE-SERVICES - [18446744073709551615:9007199254740993]",
        '[9007199254740993:18446744073709551615] -A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -j KUBE-SVC-TCOU7JCQXEZGVUNU',
        "COMMIT",
      ].join("\n"),
    );
    const nat = save.tables.nat;
    expect(nat?.chains["KUBE-SERVICES"]).toMatchObject({
      packets: "18446744073709551615",
      bytes: "9007199254740993",
    });
    expect(nat?.rules[0]).toMatchObject({ packets: "9007199254740993", bytes: "18446744073709551615" });
  });
});
