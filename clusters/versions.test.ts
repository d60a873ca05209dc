/**
 * Any Cilium version runs, or is refused in one line saying why (issue 38): a patch of a declared minor gets
 * that minor's expectations; a patch of a newer minor gets the newest declared minor's, marked "assumed from";
 * an older minor, another major or no version at all is refused. The declared versions in the pure tests are
 * written by us (declared: 1.18.11, 1.19.7, 1.20.2); the others read clusters/lab/versions.env.
 */
import { describe, expect, it } from "vitest";
import { UserError } from "../helpers/errors.ts";
import { expectationBasis, versionStanding } from "../helpers/properties/versions.ts";
import {
  assertRunnableCilium,
  CILIUM_MINORS,
  CILIUM_PATCHES,
  neverRunHere,
  RUN_CILIUM_VERSIONS,
  resolveCilium,
} from "./versions.ts";

const DECLARED = ["1.20.2", "1.19.7", "1.18.11"];
const NEWEST = CILIUM_MINORS.at(-1) as string;
const [MAJ, MIN] = NEWEST.split(".").map(Number) as [number, number];
/** A minor newer and one older than every declared one, whatever versions.env declares. */
const NEWER = `${MAJ}.${MIN + 1}.0`;
const OLDER = `${MAJ}.${Number((CILIUM_MINORS[0] as string).split(".")[1]) - 1}.0`;

describe("a version's standing (declared, newer, older)", () => {
  it("declared minors, any patch; a newer minor assumes the newest declared one as of its newest run patch", () => {
    expect(versionStanding("1.19.8", DECLARED)).toEqual({ kind: "declared", minor: "1.19" });
    expect(versionStanding("1.20", DECLARED)).toEqual({ kind: "declared", minor: "1.20" });
    expect(versionStanding("1.21.0", DECLARED)).toEqual({
      kind: "newer",
      minor: "1.21",
      from: "1.20",
      as: "1.20.2",
    });
    expect(versionStanding("v1.23.4-rc.1", DECLARED)).toMatchObject({
      kind: "newer",
      minor: "1.23",
      from: "1.20",
    });
    expect(versionStanding("1.17.3", DECLARED)).toEqual({ kind: "older", minor: "1.17", oldest: "1.18" });
    expect(versionStanding("2.0.0", DECLARED)).toEqual({ kind: "other-major", minor: "2.0" });
    expect(versionStanding("latest", DECLARED)).toEqual({ kind: "invalid" });
  });

  it("the basis a verdict is resolved on: the version itself, or the newest declared patch with the minor assumed", () => {
    expect(expectationBasis("1.19.8", DECLARED)).toEqual({ resolveAs: "1.19.8" });
    expect(expectationBasis("1.21.0", DECLARED)).toEqual({ resolveAs: "1.20.2", assumedFrom: "1.20" });
    expect(expectationBasis(undefined, DECLARED)).toEqual({ resolveAs: undefined });
    // an older minor is judged as itself (a run refuses it before; an old bundle keeps its verdicts' meaning)
    expect(expectationBasis("1.17.0", DECLARED)).toEqual({ resolveAs: "1.17.0" });
  });
});

describe("resolveCilium and the lines a run says (versions.env's declared versions)", () => {
  it("a declared minor → its pinned patch; any patch as given; a newer minor's patch carries what it assumes", () => {
    for (const m of CILIUM_MINORS) expect(resolveCilium(m)).toEqual({ version: CILIUM_PATCHES[m], minor: m });
    expect(resolveCilium(`v${NEWEST}.99`)).toEqual({ version: `${NEWEST}.99`, minor: NEWEST });
    expect(resolveCilium(NEWER)).toEqual({ version: NEWER, minor: `${MAJ}.${MIN + 1}`, assumedFrom: NEWEST });
    expect(resolveCilium(`${NEWER}-rc.1`).version).toBe(`${NEWER}-rc.1`);
  });

  it("refused in one line each, saying why: a bare undeclared minor, an older minor, another major, no version", () => {
    const refusal = (v: string) => {
      try {
        resolveCilium(v);
      } catch (err) {
        expect(err).toBeInstanceOf(UserError);
        return (err as Error).message;
      }
      throw new Error(`${v} was taken`);
    };
    expect(refusal(`${MAJ}.${MIN + 1}`)).toBe(
      `Cilium ${MAJ}.${MIN + 1} is a minor the suite has not declared, so it pins no patch of it: name one (e.g. ${MAJ}.${MIN + 1}.0; a release candidate as ${MAJ}.${MIN + 1}.0-rc.1), and its expectations are assumed from ${NEWEST}`,
    );
    expect(refusal(OLDER)).toMatch(
      new RegExp(
        `^Cilium ${OLDER.replace(/\./g, "\\.")} is older than every minor the suite declares \\(oldest: ${CILIUM_MINORS[0]}\\): refused, since no expectation was checked against `,
      ),
    );
    expect(refusal("2.0.0")).toMatch(
      /^Cilium 2\.0\.0 is of a major version the suite has never declared: refused/,
    );
    expect(refusal("1.19.x")).toMatch(/^unsupported Cilium version "1\.19\.x"; valid: /);
    for (const v of [OLDER, "2.0.0", "1.19.x", `${MAJ}.${MIN + 1}`]) expect(refusal(v)).not.toContain("\n");
  });

  it("never run here: an unknown patch in one line, a newer minor's assumption in one line, nothing for a run patch", () => {
    expect(neverRunHere(RUN_CILIUM_VERSIONS[0] as string)).toEqual([]);
    expect(neverRunHere(`${NEWEST}.99`)).toEqual([
      `never run here: Cilium ${NEWEST}.99; the expectations of ${NEWEST} apply (the suite has run ${RUN_CILIUM_VERSIONS.join(", ")})`,
    ]);
    const [line, ...rest] = neverRunHere(NEWER);
    expect(rest).toEqual([]);
    expect(line).toContain(`every expectation is assumed from ${NEWEST} (as of ${CILIUM_PATCHES[NEWEST]})`);
    expect(line).toContain('"changed in the new minor"');
  });

  it("a cluster found running an older minor is refused; one whose version cannot be read is not", () => {
    expect(() => assertRunnableCilium(OLDER)).toThrow(UserError);
    expect(() => assertRunnableCilium(NEWER)).not.toThrow();
    expect(() => assertRunnableCilium("unknown")).not.toThrow();
  });
});

describe("the versions' one source", () => {
  it("clusters/lab/versions.env is read by one TypeScript module only (helpers/properties/versions.ts)", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const { join, relative } = await import("node:path");
    const root = join(import.meta.dirname, "..");
    const readers = ["helpers", "clusters", "suites", "cli", "scripts", "manifests", "bin"]
      .flatMap((d) =>
        readdirSync(join(root, d), { withFileTypes: true, recursive: true })
          .filter((e) => e.isFile() && /\.(ts|mts|mjs)$/.test(e.name) && !/\.test\.ts$/.test(e.name))
          .map((e) => join(e.parentPath, e.name)),
      )
      .filter((f) => !f.includes("node_modules"))
      .filter((f) => /"versions\.env"/.test(readFileSync(f, "utf8")))
      .map((f) => relative(root, f));
    expect(readers).toEqual(["helpers/properties/versions.ts"]);
  });
});
