import { describe, expect, it } from "vitest";
import { describeModeExpectation, inPatchRange, resolve } from "./expectation.ts";

describe("expectations by Cilium version", () => {
  const e = {
    default: { eq: "EHOSTUNREACH" },
    byMinor: { "1.18": { eq: "X" } },
    byPatch: [{ from: "1.19.2", to: "1.19.3", expect: { eq: "EPERM" }, why: "issue 45184" }],
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

  it("a bare minor is never inside a patch range (its patch is unknown)", () => {
    expect(resolve(e, "1.19")).toEqual({ eq: "EHOSTUNREACH" });
    expect(inPatchRange("1.19", { from: "1.19.0", to: "1.19.9" })).toBe(false);
    expect(inPatchRange("1.19.10", { from: "1.19.2", to: "1.19.3" })).toBe(false);
  });

  it("the table names the ranges", () => {
    expect(describeModeExpectation(e)).toBe("EHOSTUNREACH (1.18: X; 1.19.2–1.19.3: EPERM)");
  });
});
