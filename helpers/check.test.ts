import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../cli/main.ts";
import { bundleName, SHIPPED_BUNDLES } from "../suites/environment.ts";
import { RECORDED_FAILURES } from "../suites/recorded-failures.ts";
import { TOPICS } from "../suites/topics.ts";
import { bundleTopics } from "./bundle/read.ts";
import { checkBundle, judgeBundle } from "./check.ts";
import { BundleCopies, GHOST_CURL, KUBE_SVC_LINE } from "./testing/tamper.ts";

const copies = new BundleCopies();
afterAll(() => copies.cleanup());

describe("check BUNDLE", () => {
  it("every recorded failure kept names a shipped bundle, and a failure its run stored", () => {
    for (const [bundle, ids] of Object.entries(RECORDED_FAILURES)) {
      const dir = SHIPPED_BUNDLES.find((d) => bundleName(d) === bundle);
      expect(dir, bundle).toBeDefined();
      const stored = readFileSync(join(dir as string, "verdicts.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; status: string });
      // a failure the run's own judge passed, or a property newer than the run, is kept only where its reason
      // says so (check then says the stored verdict differs and why)
      for (const [id, why] of Object.entries(ids))
        expect(stored.find((v) => v.id === id)?.status, `${bundle} ${id}`).toBe(
          why.includes("Its run stored pass")
            ? "pass"
            : why.includes("Its run stored no verdict")
              ? undefined
              : "fail",
        );
    }
  });

  it.each(SHIPPED_BUNDLES)("the shipped bundle %s passes every property it recorded", async (dir) => {
    const r = await checkBundle(dir, TOPICS);
    // but the real failures it keeps on purpose, exactly those (suites/recorded-failures.ts)
    const kept = RECORDED_FAILURES[bundleName(dir)] ?? {};
    expect(r.verdicts.filter((v) => v.status === "fail" && !(v.id in kept)).map((v) => v.message)).toEqual(
      [],
    );
    for (const id of Object.keys(kept))
      expect(
        r.verdicts.find((v) => v.id === id)?.status,
        `${bundleName(dir)} ${id} (recorded-failures.ts)`,
      ).toBe("fail");
    // skipped: only a leg the bundle did not record (a full bundle lacks only the upgrade leg; the partial
    // bundles — drop profile, baseline — hold two topics; an upgrade run without ROLLBACK=1 has no rollback
    // leg), an n/a expectation, the drop profile, a step newer than the recording, or, on an existing cluster,
    // the client outside the nodes (no docker network of ours there)
    const partial = !bundleTopics(dir).includes("iptables");
    // every bundle recorded before the config topic (issue 25) lacks it
    // and the ipv6 topic (a dual-stack cluster's) is not in those recorded before it, nor the Service-surface
    // topics (issue 34) in those recorded before them, nor their IPv6 family (surface-ipv6), nor the lifecycle topics
    const missing = partial
      ? "\\S+"
      : "(upgrade|restart|config|ipv6|loadbalancer|external-ip|traffic-policy|session-affinity|host-network|surface-ipv6|lifecycle|lifecycle-ports|lifecycle-agents|lifecycle-operator|lifecycle-control)";
    for (const v of r.verdicts.filter((x) => x.status === "skip"))
      expect(v.message).toMatch(
        new RegExp(
          `the bundle has no recorded calls for ${missing}$|not applicable|opt-in drop profile|predates|this run has no rollback leg|no client outside the nodes could run here \\(existing cluster`,
        ),
      );
  });

  it("KUBE-SVC rules in a kpr bundle fail, naming the property and the offending line", async () => {
    const dir = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
      t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
    );
    let out = "";
    const io = {
      out: (s: string) => {
        out += s;
      },
      err: () => {},
      readStdin: async () => "",
    };
    expect(await main(["check", dir], io)).toBe(1);
    expect(out).toContain("FAIL   iptables.kube-svc-lines");
    expect(out).toContain("expected: 0\n  observed: 1");
    expect(out).toContain(KUBE_SVC_LINE);
  });

  it("a ghost that times out in a kube-proxy bundle fails ghost.fails-fast and ghost.seconds", async () => {
    const dir = copies.tampered("kube-proxy", "ghost", GHOST_CURL, () => "http_code=000 time_total=5.004121");
    const calls = join(dir, "calls", "ghost.jsonl");
    writeFileSync(calls, readFileSync(calls, "utf8").replace(/"exitCode":7/g, '"exitCode":28'));
    const r = await checkBundle(dir, TOPICS);
    expect(r.verdicts.filter((v) => v.status === "fail").map((v) => v.id)).toEqual([
      "ghost.fails-fast",
      "ghost.seconds",
    ]);
  });
});

describe("a topic whose replay throws (issue 36)", () => {
  const dir = join(import.meta.dirname, "..", "suites", "bundles", "1.19", "kpr");
  const withObserve = (observe: () => never) => {
    const dns = TOPICS.find((t) => t.name === "kube-dns");
    if (!dns) throw new Error("no kube-dns topic");
    return [{ ...dns, observe }];
  };

  it("an error the topic foresaw fails its properties, naming why; a TypeError or a stack overflow is no verdict", async () => {
    const failed = await judgeBundle(
      dir,
      withObserve(() => {
        throw new Error("the resolver's answer was cut");
      }),
      () => {},
    );
    const dns = failed.verdicts.filter((v) => v.topic === "kube-dns" && v.status !== "skip");
    expect(dns.length).toBeGreaterThan(0);
    for (const v of dns) {
      expect(v.status).toBe("fail");
      expect(v.message).toContain("kube-dns could not be replayed: the resolver's answer was cut");
    }
    for (const err of [
      new RangeError("Maximum call stack size exceeded"),
      new TypeError("x.map is not a function"),
    ])
      await expect(
        judgeBundle(
          dir,
          withObserve(() => {
            throw err;
          }),
          () => {},
        ),
      ).rejects.toBe(err);
  });
});
