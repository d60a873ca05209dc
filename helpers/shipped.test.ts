/**
 * Which shipped bundle a bundle is compared with by default (issue 38, item 2). The metadata of the bundles
 * compared is a shipped bundle's, relabelled by us (another version, mode or profile); nothing is judged here.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readMeta } from "./bundle/read.ts";
import { nearestShipped, SHIPPED_ROOT, shippedBundles } from "./shipped.ts";

const base = readMeta(join(SHIPPED_ROOT, "1.19", "kpr"));
/** A bundle of ours outside suites/bundles (its folder is never read: its metadata is given). */
const elsewhere = join(tmpdir(), "dpc-not-shipped");
const DECLARED = ["1.20.2", "1.19.7", "1.18.11"];
const near = (over: Partial<typeof base>) =>
  nearestShipped(elsewhere, { ...base, ...over }, SHIPPED_ROOT, DECLARED);

describe("the shipped bundle a run is compared with by default", () => {
  it("reads the shipped fresh installs, per minor and per profile, not the special runs", () => {
    const all = shippedBundles().map((s) => `${s.cilium} ${s.mode} ${s.profile ?? "-"}`);
    expect(all).toContain("1.20.2 kpr -");
    expect(all).toContain("1.18.11 kube-proxy -");
    expect(all).toContain("1.20.2 kpr dual-stack");
    // 1.19/drop-kpr, upgrade-*, existing/* are other kinds of runs
    expect(
      shippedBundles()
        .map((s) => s.dir)
        .filter((d) => /drop|upgrade|existing/.test(d)),
    ).toEqual([]);
  });

  it("a newer minor: the newest declared one of its mode; an unknown patch: its own minor's", () => {
    expect(near({ cilium: "1.21.0", mode: "kpr" })?.dir).toBe(join(SHIPPED_ROOT, "1.20", "kpr"));
    expect(near({ cilium: "1.21.0", mode: "kube-proxy" })?.dir).toBe(
      join(SHIPPED_ROOT, "1.20", "kube-proxy"),
    );
    expect(near({ cilium: "1.19.8" })?.dir).toBe(join(SHIPPED_ROOT, "1.19", "kpr"));
    expect(near({ cilium: "1.18.12" })?.dir).toBe(join(SHIPPED_ROOT, "1.18", "kpr"));
    expect(near({ cilium: "1.21.0" })?.why).toBe(
      "Cilium 1.21.0 is of a minor the suite has not declared: compared with the shipped bundle of the nearest declared version, suites/bundles/1.20/kpr (kpr, Cilium 1.20.2)",
    );
    expect(near({ cilium: "1.19.8" })?.why).toMatch(
      /^the suite ships no bundle of Cilium 1\.19\.8: compared with /,
    );
  });

  it("the same profile: its shipped bundle, whatever its version; a profile never shipped in that mode: none", () => {
    expect(near({ cilium: "1.19.8", datapathProfile: "dual-stack", mode: "kube-proxy" })?.dir).toBe(
      join(SHIPPED_ROOT, "profiles", "dual-stack", "kube-proxy"),
    );
    expect(near({ cilium: "1.21.0", datapathProfile: "dsr-maglev", mode: "kube-proxy" })).toBeNull();
  });

  it("none where the suite ships the version's own bundle, for a shipped bundle, or an upgrade", () => {
    expect(near({ cilium: "1.19.7" })).toBeNull();
    expect(nearestShipped(join(SHIPPED_ROOT, "1.19", "kpr"), { ...base, cilium: "1.21.0" })).toBeNull();
    const upgrade = readMeta(join(SHIPPED_ROOT, "upgrade-1.19-1.20", "kpr"));
    expect(near({ ...upgrade, cilium: "1.21.0" })).toBeNull();
  });
});
