import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleTopics } from "../helpers/bundle/read.ts";
import {
  bundleName,
  replayCover,
  replayTargets,
  SHIPPED_BUNDLES,
  SUITES_DIR,
  topicTargets,
} from "./environment.ts";
import { TOPICS } from "./topics.ts";

const targets = replayTargets(SHIPPED_BUNDLES, join(SUITES_DIR, "..", "results", "environment-test"));
const byLabel = (label: string) => targets.find((t) => t.label === label);

describe("replayed bundles: a topic runs only where it was recorded", () => {
  it("each bundle holds exactly the topics it has calls for; test names carry its folder", () => {
    expect(targets.map((t) => t.label)).toEqual(SHIPPED_BUNDLES.map((b) => `replay ${bundleName(b)}`));
    for (const [i, t] of targets.entries())
      for (const topic of TOPICS)
        expect(t.holds(topic.name), `${t.label} ${topic.name}`).toBe(
          bundleTopics(SHIPPED_BUNDLES[i] as string).includes(topic.name),
        );
    expect(TOPICS.filter((x) => byLabel("replay 1.19/drop-kpr")?.holds(x.name)).map((x) => x.name)).toEqual([
      "config",
      "ghost",
      "measure-latency",
    ]);
  });

  it("a partial bundle adds no tests for the topics it lacks", () => {
    // the full bundles (one per minor and mode, and the existing provider's) hold iptables; the partial ones (drop, baseline) and the
    // upgrade runs do not; only the upgrade runs hold upgrade
    const labels = targets.map((t) => t.label);
    // (an upgrade bundle's after-upgrade/ and after-rollback/ are full runs of their own, on the same cluster)
    const full = labels.filter(
      (l) =>
        /^replay (\d+\.\d+|existing|profiles\/[a-z-]+)\/(existing-)?(kpr|kube-proxy)$/.test(l) ||
        // the lifecycle folders hold full runs too (every topic, the lifecycle ones among them)
        /^replay lifecycle\/[\w.-]+\/(kpr|kube-proxy)$/.test(l) ||
        /^replay upgrade-[\d.-]+\/(kpr|kube-proxy)(-\d+)?\/after-(upgrade|rollback)$/.test(l),
    );
    expect(full.length).toBeGreaterThanOrEqual(8);
    expect(topicTargets(targets, "iptables").holding.map((t) => t.label)).toEqual(full);
    // a second recording of one path sits beside the first (`kpr-2`)
    const upgrades = labels.filter((l) => /^replay upgrade-[\d.-]+\/(kpr|kube-proxy)(-\d+)?$/.test(l));
    // every upgrade bundle's legs: two nested bundles with a rollback, one without
    const nested = SHIPPED_BUNDLES.filter((d) => /\/after-(upgrade|rollback)$/.test(d)).length;
    expect(labels.filter((l) => /\/after-(upgrade|rollback)$/.test(l)).length).toBe(nested);
    expect(nested).toBeGreaterThanOrEqual(8);
    expect(upgrades.length).toBeGreaterThanOrEqual(1);
    expect(topicTargets(targets, "upgrade").holding.map((t) => t.label)).toEqual(upgrades);
    expect(topicTargets(targets, "ghost").none).toBeNull();
  });

  it("no bundle with the topic: one reason naming the bundles replayed", () => {
    const drops = targets.filter((t) => t.label.startsWith("replay 1.19/drop-"));
    expect(topicTargets(drops, "holder")).toEqual({
      holding: [],
      none: "none of the 2 bundles replayed (replay 1.19/drop-kpr, replay 1.19/drop-kube-proxy) recorded holder",
    });
  });
});

describe("what the replay project replays under npm test: one bundle of each kind (REPLAY_BUNDLES=all: every one)", () => {
  const names = [
    "1.20/kpr",
    "existing/kpr",
    "profiles/native-bpf/kpr",
    "profiles/native-bpf/existing-kpr",
    "upgrade-1.18-1.19/kpr",
    "upgrade-1.18-1.19/kpr/after-upgrade",
    "upgrade-1.19-1.20/kpr",
    "upgrade-1.19-1.20/kpr/after-rollback",
  ].map((n) => join(SUITES_DIR, "bundles", n));
  it("leaves rollback legs, profile clusters' existing-provider runs and older upgrade paths to check", () => {
    expect(
      replayCover([...names, join(SUITES_DIR, "bundles", "upgrade-1.19-1.20/kpr/after-upgrade")]).map(
        bundleName,
      ),
    ).toEqual([
      "1.20/kpr",
      "existing/kpr",
      "profiles/native-bpf/kpr",
      "upgrade-1.19-1.20/kpr",
      "upgrade-1.19-1.20/kpr/after-upgrade",
    ]);
  });
  it("on the shipped bundles: every topic and mode, every profile and every kind of run is still replayed", () => {
    const cover = replayCover(SHIPPED_BUNDLES);
    const kinds = (list: string[]) =>
      new Set(
        list.flatMap((b) => {
          const meta = JSON.parse(readFileSync(join(b, "bundle.json"), "utf8")) as {
            mode: string;
            provider: string;
          };
          return bundleTopics(b).map((t) => `${t} ${meta.mode} ${meta.provider}`);
        }),
      );
    expect([...kinds(cover)].sort()).toEqual([...kinds(SHIPPED_BUNDLES)].sort());
    const profiles = (list: string[]) =>
      new Set(list.map(bundleName).flatMap((n) => /^profiles\/([^/]+)\//.exec(n)?.[1] ?? []));
    expect(profiles(cover)).toEqual(profiles(SHIPPED_BUNDLES));
    expect(cover.length).toBeLessThan(SHIPPED_BUNDLES.length);
  });
});
