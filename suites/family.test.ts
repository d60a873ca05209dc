/**
 * The IP-family dimension holds (helpers/properties/family.ts): every property of an IPv6 topic names its IPv4
 * twin, an existing IPv4 property, or says why it has none, and each pair expects the same, mode by mode, per
 * version and per configuration case, unless the IPv6 member declares why a mode differs.
 */
import { describe, expect, it } from "vitest";
import { familyExpectation, familyProblems, ipv6Of, ipv6Only, twinOf } from "../helpers/properties/family.ts";
import type { Property } from "../helpers/properties/types.ts";
import { PROPERTIES, propertyById, TOPICS } from "./topics.ts";

const IPV6_TOPICS = new Set(TOPICS.filter((t) => t.family === "ipv6").map((t) => t.name));

/** The declared properties with one of them changed. */
const withChanged = (id: string, change: (p: Property) => Property): Property[] =>
  PROPERTIES.map((p) => (p.id === id ? change(p) : p));

describe("IP-family pairs", () => {
  it("the IPv6 topics are declared as such", () => {
    expect([...IPV6_TOPICS].sort()).toEqual(["ipv6", "surface-ipv6"]);
  });

  it("every pair is whole: its twin exists, and where their expectations differ the reason is declared", () => {
    expect(familyProblems(PROPERTIES, IPV6_TOPICS)).toEqual([]);
  });

  it("every IPv6 property but the declared exceptions has an IPv4 twin", () => {
    const alone = PROPERTIES.filter((p) => IPV6_TOPICS.has(p.topic) && twinOf(p) === null).map((p) => p.id);
    expect(alone).toEqual(["ipv6.clusterip-http"]);
  });

  it("a twin that is no property, a missing declaration, an undeclared and a stale difference each fail", () => {
    const near = "surface-ipv6.lb-from-pod-near";
    expect(
      familyProblems(
        withChanged(near, (p) => ({ ...p, family: ipv6Of("loadbalancer.lb-from-pod-near") })),
        IPV6_TOPICS,
      ),
    ).toEqual([`${near}: its IPv4 twin loadbalancer.lb-from-pod-near is no property`]);
    expect(
      familyProblems(
        withChanged(near, ({ family: _, ...p }) => p),
        IPV6_TOPICS,
      ),
    ).toEqual([`${near}: a property of an IPv6 topic declares neither its IPv4 twin nor why it has none`]);
    expect(
      familyProblems(
        withChanged(near, (p) => ({ ...p, expect: { ...p.expect, "kube-proxy": { eq: "REFUSED" } } })),
        IPV6_TOPICS,
      ),
    ).toEqual([
      `${near} (kube-proxy): expects REFUSED, its IPv4 twin lb.from-pod-near HTTP 200: declare why in family.differs, or align them`,
    ]);
    expect(
      familyProblems(
        withChanged(near, (p) => ({ ...p, family: ipv6Of("lb.from-pod-near", { kpr: "no reason" }) })),
        IPV6_TOPICS,
      ),
    ).toEqual([
      `${near} (kpr): declares a difference from lb.from-pod-near (no reason), but both expect HTTP 200`,
    ]);
  });

  it("a twin claimed twice, a twin of the IPv6 family and a family outside an IPv6 topic each fail", () => {
    const far = "surface-ipv6.lb-from-pod-far";
    expect(
      familyProblems(
        withChanged(far, (p) => ({ ...p, family: ipv6Of("lb.from-pod-near") })),
        IPV6_TOPICS,
      ),
    ).toEqual([`${far}: lb.from-pod-near is already the IPv4 twin of surface-ipv6.lb-from-pod-near`]);
    expect(
      familyProblems(
        withChanged(far, (p) => ({ ...p, family: ipv6Of("ipv6.nodeport-http") })),
        IPV6_TOPICS,
      ).filter((l) => l.includes("itself")),
    ).toEqual([`${far}: its twin ipv6.nodeport-http is itself an IPv6 property`]);
    expect(
      familyProblems(
        withChanged("lb.from-node", (p) => ({ ...p, family: ipv6Only("none") })),
        IPV6_TOPICS,
      ),
    ).toEqual(["lb.from-node: declares an IP family, but its topic is not an IPv6 one"]);
  });

  it("compares values per version and per configuration case, not claims; `each` bounds a single probe alike", () => {
    const ghost = propertyById("ghost.seconds");
    const ghost6 = propertyById("ipv6.ghost-seconds");
    expect(familyExpectation(ghost6, "kpr")).toBe("≤ 0.1; with socketLB hostns-only: ≤ 0.1");
    expect(familyExpectation(ghost, "kpr")).toBe(
      "≤ 0.1; with socketLB hostns-only: ≤ 0.1 (1.20.2: ≥ 4.9 (known issue))",
    );
  });
});
