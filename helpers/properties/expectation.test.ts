import { describe, expect, it } from "vitest";
import {
  type ByVersion,
  describeModeExpectation,
  deviations,
  inPatchRange,
  resolve,
  resolveVersion,
} from "./expectation.ts";

describe("expectations by Cilium version", () => {
  const e: ByVersion = {
    default: { eq: "EHOSTUNREACH" },
    byMinor: {
      "1.18": { kind: "behaviour", expect: { eq: "X" }, claim: "1.18 says X", why: "written by us" },
    },
    byPatch: [
      {
        from: "1.19.2",
        to: "1.19.3",
        kind: "known-issue",
        expect: { eq: "EPERM" },
        claim: "EPERM instead",
        why: "issue 45184",
        upstream: "issue 45184",
      },
    ],
  };

  it("a patch range wins for a full version inside it, the minor or the default otherwise", () => {
    expect(resolve(e, "1.19.2")).toEqual({ eq: "EPERM" });
    expect(resolve(e, "1.19.3")).toEqual({ eq: "EPERM" });
    expect(resolve(e, "1.19.4")).toEqual({ eq: "EHOSTUNREACH" });
    expect(resolve(e, "1.18.9")).toEqual({ eq: "X" });
    expect(resolve(e, "1.18")).toEqual({ eq: "X" });
    expect(resolve(e, "v1.19.3")).toEqual({ eq: "EPERM" });
    expect(resolve(e)).toEqual({ eq: "EHOSTUNREACH" });
  });

  it("a known issue keeps what the version is meant to do; a behaviour is what it is meant to do", () => {
    const known = resolveVersion(e, "1.19.3");
    expect(known.deviation?.kind).toBe("known-issue");
    expect(known.deviation?.versions).toBe("1.19.2–1.19.3");
    expect(known.intended).toEqual({ eq: "EHOSTUNREACH" });
    const behaviour = resolveVersion(e, "1.18.2");
    expect(behaviour.deviation?.kind).toBe("behaviour");
    expect(behaviour.intended).toEqual({ eq: "X" });
    expect(resolveVersion(e, "1.20.1").deviation).toBeNull();
  });

  it("a known issue inside a minor with its own behaviour is meant to do that minor's behaviour", () => {
    const f: ByVersion = {
      ...e,
      byPatch: [
        { ...(e.byPatch?.[0] as NonNullable<ByVersion["byPatch"]>[number]), from: "1.18.1", to: "1.18.1" },
      ],
    };
    expect(resolveVersion(f, "1.18.1").intended).toEqual({ eq: "X" });
    expect(resolveVersion(f, "1.18.1").expect).toEqual({ eq: "EPERM" });
  });

  it("a bare minor is never inside a patch range (its patch is unknown)", () => {
    expect(resolve(e, "1.19")).toEqual({ eq: "EHOSTUNREACH" });
    expect(inPatchRange("1.19", { from: "1.19.0", to: "1.19.9" })).toBe(false);
    expect(inPatchRange("1.19.10", { from: "1.19.2", to: "1.19.3" })).toBe(false);
  });

  it("the table names the ranges and which of them are known issues", () => {
    expect(describeModeExpectation(e)).toBe("EHOSTUNREACH (1.18: X; 1.19.2–1.19.3: EPERM (known issue))");
    expect(deviations(e).map((d) => `${d.versions} ${d.kind}`)).toEqual([
      "1.18 behaviour",
      "1.19.2–1.19.3 known-issue",
    ]);
  });
});
