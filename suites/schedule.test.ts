import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PARTS } from "../clusters/parts.ts";
import type { TopicDeclaration } from "../helpers/topic.ts";
import {
  formatSchedule,
  phases,
  recordedSeconds,
  simulatedSeconds,
  startOrder,
  Turns,
  waitsFor,
} from "./schedule.ts";
import { specTopic } from "./sequencer.ts";
import { TOPICS } from "./topics.ts";

/** Every topic `t` waits for, directly or through those it waits for. */
function settledBefore(t: TopicDeclaration, run: readonly TopicDeclaration[]): Set<string> {
  const out = new Set<string>();
  const visit = (x: TopicDeclaration) => {
    for (const w of waitsFor(x, run))
      if (!out.has(w.name)) {
        out.add(w.name);
        visit(w);
      }
  };
  visit(t);
  return out;
}

/** Whether a and b may be observed at the same time in a run of every topic. */
const overlap = (a: TopicDeclaration, b: TopicDeclaration) =>
  !settledBefore(a, TOPICS).has(b.name) && !settledBefore(b, TOPICS).has(a.name);

describe("the topics' schedule declarations", () => {
  it("name only topics of their own stretch or earlier, without a cycle (the workers take each after them: no deadlock)", () => {
    const group = (name: string) => phases(TOPICS).findIndex((g) => g.some((t) => t.name === name));
    for (const t of TOPICS)
      if ("after" in t.schedule)
        for (const a of t.schedule.after) {
          expect(
            TOPICS.some((x) => x.name === a),
            `${t.name} follows ${a}, which is not a topic`,
          ).toBe(true);
          expect(
            group(a),
            `${t.name} follows ${a}, which comes after a topic that runs alone after it`,
          ).toBeLessThanOrEqual(group(t.name));
        }
    for (const t of TOPICS)
      expect(settledBefore(t, TOPICS).has(t.name), `${t.name} waits for itself`).toBe(false);
    for (const workers of [1, 4]) expect(startOrder(TOPICS, workers, () => 10)).toHaveLength(TOPICS.length);
  });

  it("give a reason, and name no topic twice", () => {
    for (const t of TOPICS) {
      const why = "alone" in t.schedule ? t.schedule.alone : t.schedule.why;
      expect(why.length, t.name).toBeGreaterThan(20);
      if ("after" in t.schedule) expect(new Set(t.schedule.after).size).toBe(t.schedule.after.length);
      if ("alone" in t.schedule && t.schedule.besides)
        expect(
          t.schedule.besidesWhy?.length ?? 0,
          `${t.name}: why beside ${t.schedule.besides}`,
        ).toBeGreaterThan(20);
    }
  });

  it("let a topic that runs alone share its turn only with topics alone too, right before it in file order", () => {
    for (const [i, t] of TOPICS.entries()) {
      if (!("alone" in t.schedule) || !t.schedule.besides) continue;
      const before = TOPICS.slice(i - t.schedule.besides.length, i);
      expect(before.map((b) => b.name).sort(), t.name).toEqual([...t.schedule.besides].sort());
      for (const b of before) expect("alone" in b.schedule, `${t.name} beside ${b.name}`).toBe(true);
    }
    // the one pair today: the operator's restart beside the agents', the API-server cut after both
    const run = TOPICS.filter((t) => !t.runsIn);
    const named = (n: string) => run.find((t) => t.name === n) as TopicDeclaration;
    const waits = (n: string) => waitsFor(named(n), run).map((t) => t.name);
    expect(waits("lifecycle-operator")).not.toContain("lifecycle-agents");
    expect(waits("lifecycle-operator")).toContain("invariants");
    expect(waits("lifecycle-control")).toEqual(
      expect.arrayContaining(["lifecycle-agents", "lifecycle-operator"]),
    );
    expect(
      phases(run)
        .find((g) => g.some((t) => t.name === "lifecycle-operator"))
        ?.map((t) => t.name),
    ).toEqual(["lifecycle-agents", "lifecycle-operator"]);
  });

  it("keep two topics that write the same record apart (the merged datapath record aside)", () => {
    for (const [i, a] of TOPICS.entries())
      for (const b of TOPICS.slice(i + 1)) {
        const shared = a.builds.filter((r) => r !== "datapath" && b.builds.includes(r));
        if (shared.length > 0)
          expect(overlap(a, b), `${a.name} and ${b.name} both write ${shared.join(", ")}`).toBe(false);
      }
  });

  it("never run a topic beside one that changes what it counts whole (identical runs, identical answers)", () => {
    for (const [i, a] of TOPICS.entries())
      for (const b of TOPICS.slice(i + 1)) {
        if (!overlap(a, b)) continue;
        for (const [x, y] of [
          [a, b],
          [b, a],
        ] as const) {
          const clash = (x.shared?.counts ?? []).filter((c) => (y.shared?.changes ?? []).includes(c));
          expect(clash, `${x.name} counts ${clash.join(", ")}, which ${y.name} changes beside it`).toEqual(
            [],
          );
        }
      }
  });

  it("the overlap check can fail: iptables runs beside kube-dns, so a kube-dns that added Services would be caught", () => {
    const iptables = TOPICS.find((t) => t.name === "iptables") as TopicDeclaration;
    const kubeDns = TOPICS.find((t) => t.name === "kube-dns") as TopicDeclaration;
    expect(overlap(iptables, kubeDns)).toBe(true);
    expect(iptables.shared?.counts).toContain("kube-proxy service rules");
    expect(kubeDns.shared?.changes ?? []).not.toContain("kube-proxy service rules");
  });

  it("put a topic whose properties read another topic's record after that topic", () => {
    for (const t of TOPICS) {
      const before = settledBefore(t, TOPICS);
      for (const p of t.properties)
        for (const r of p.needs) {
          if (r === "datapath" || t.builds.includes(r)) continue;
          const builders = TOPICS.filter((x) => x.builds.includes(r)).map((x) => x.name);
          expect(
            builders.some((b) => before.has(b)),
            `${p.id} reads ${r} (built by ${builders.join(", ")}), which ${t.name} does not follow`,
          ).toBe(true);
        }
    }
  });

  it("run the configuration first and alone (every later expectation is resolved for what it reads)", () => {
    const first = TOPICS[0] as TopicDeclaration;
    expect(first.name).toBe("config");
    expect("alone" in first.schedule).toBe(true);
  });

  it("run the measurements, the invariants and the upgrade alone", () => {
    for (const n of ["measure-scale", "measure-latency", "invariants", "upgrade"])
      expect("alone" in (TOPICS.find((t) => t.name === n) as TopicDeclaration).schedule, n).toBe(true);
  });

  it("form the groups the README names", () => {
    expect(phases(TOPICS).map((g) => g.map((t) => t.name))).toMatchInlineSnapshot(`
      [
        [
          "config",
        ],
        [
          "iptables",
          "service-map",
          "scale",
          "holder",
          "program",
          "nodeport",
          "ghost",
          "report",
          "kube-dns",
          "host-routing",
          "translation",
          "vxlan",
          "ipv6",
          "loadbalancer",
          "external-ip",
          "traffic-policy",
          "session-affinity",
          "host-network",
          "surface-ipv6",
          "lifecycle",
          "lifecycle-ports",
        ],
        [
          "measure-scale",
        ],
        [
          "measure-latency",
        ],
        [
          "invariants",
        ],
        [
          "lifecycle-agents",
          "lifecycle-operator",
        ],
        [
          "lifecycle-control",
        ],
        [
          "restart",
        ],
        [
          "upgrade",
        ],
      ]
    `);
  });
});

describe("waitsFor", () => {
  const topic = (name: string, schedule: TopicDeclaration["schedule"]) =>
    ({ name, schedule }) as unknown as TopicDeclaration;
  const a = topic("config", { alone: "first, and nothing beside it" });
  const b = topic("iptables", { after: [], why: "nothing of the others" });
  const c = topic("service-map", { after: ["iptables"], why: "web at two replicas" });
  const d = topic("measure-scale", { alone: "measures" });
  const e = topic("invariants", { after: [], why: "x" });

  it("a topic that runs alone waits for every earlier topic of the run", () => {
    expect(waitsFor(d, [a, b, c, d, e]).map((t) => t.name)).toEqual(["config", "iptables", "service-map"]);
  });

  it("another waits for those it names and for every earlier topic that runs alone", () => {
    expect(waitsFor(b, [a, b, c, d, e]).map((t) => t.name)).toEqual(["config"]);
    expect(waitsFor(c, [a, b, c, d, e]).map((t) => t.name)).toEqual(["config", "iptables"]);
    expect(waitsFor(e, [a, b, c, d, e]).map((t) => t.name)).toEqual(["config", "measure-scale"]);
  });

  it("a topic named but not in the run is not waited for (a run of some topics)", () => {
    expect(waitsFor(c, [a, c]).map((t) => t.name)).toEqual(["config"]);
    expect(waitsFor(c, [c])).toEqual([]);
  });
});

describe("Turns", () => {
  const dir = mkdtempSync(join(tmpdir(), "turns-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("resolves at once for nothing to wait for, and after the topics settle", async () => {
    const turns = new Turns(join(dir, "a"), 10);
    const lines: string[] = [];
    expect(await turns.wait([], (l) => lines.push(l))).toBe(0);
    setTimeout(() => turns.settled("iptables"), 50);
    setTimeout(() => turns.settled("scale"), 120);
    const waited = await turns.wait(["iptables", "scale"], (l) => lines.push(l));
    expect(waited).toBeGreaterThanOrEqual(100);
    expect(lines[0]).toBe("waits for iptables, scale (declared in the topics' schedule)");
    expect(lines[1]).toMatch(/^its turn after \d+\.\d s$/);
  });

  it("past its deadline names the topics that never settled", async () => {
    const turns = new Turns(join(dir, "b"), 10);
    turns.settled("config");
    await expect(turns.wait(["config", "ghost"], () => {}, 60)).rejects.toThrow(
      /waited 0 s for ghost to settle in this mode, in vain/,
    );
  });
});

describe("formatSchedule (plan's topics)", () => {
  it("says per topic what it waits for in a run of every topic, or that it runs alone, and why", () => {
    const text = formatSchedule(TOPICS, 4);
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^## topics: up to 4 topics at once in each mode/);
    expect(lines).toHaveLength(TOPICS.length + 1);
    expect(text).toMatch(/^# service-map +after config, iptables: /m);
    expect(text).toMatch(/^# measure-scale +alone: /m);
    expect(text).toMatch(/^# upgrade .*\(only in an upgrade run \(UPGRADE_TO\)\)$/m);
    expect(formatSchedule(TOPICS, 1).split("\n")[0]).toBe(
      "## topics: one topic at a time (CONFORMANCE_WORKERS=1)",
    );
  });
});

describe("specTopic", () => {
  it("reads the topic from a spec file's path: each topic folder's spec names its topic", () => {
    expect(specTopic("/x/suites/07-ghost/other.spec.ts")).toBeNull();
    const folders = readdirSync(import.meta.dirname).filter((d) => /^\d\d-/.test(d));
    const named = folders.flatMap((d) =>
      readdirSync(join(import.meta.dirname, d))
        .filter((f) => f.endsWith(".spec.ts"))
        .map((f) => specTopic(join(import.meta.dirname, d, f))),
    );
    expect(named).toEqual(TOPICS.map((t) => t.name));
  });
});

describe("startOrder (the order the cluster workers take the topics in)", () => {
  const run = TOPICS.filter((t) => !t.runsIn?.startsWith("an upgrade") && !t.runsIn?.startsWith("a restart"));
  const shipped = recordedSeconds();

  it("keeps every topic once, each after those it follows, and the topics that run alone in their place", () => {
    for (const workers of [2, 4, 6]) {
      const order = startOrder(run, workers, shipped);
      expect([...order.map((t) => t.name)].sort()).toEqual(run.map((t) => t.name).sort());
      for (const [i, t] of order.entries()) {
        for (const w of waitsFor(t, run)) expect(order.findIndex((x) => x.name === w.name)).toBeLessThan(i);
        // a topic that runs alone keeps its place, or swaps only with those sharing its turn
        if ("alone" in t.schedule) {
          const turn = phases(run).find((g) => g.includes(t)) as TopicDeclaration[];
          expect(Math.abs(i - run.indexOf(t)), t.name).toBeLessThan(turn.length);
        }
      }
    }
    // one worker: file order but for ghost and translation, which follow the Service-surface topics filed after
    // them, and report, which follows ghost
    const one = startOrder(run, 1, shipped).map((t) => t.name);
    const moved = (n: string) => n === "ghost" || n === "report" || n === "translation";
    expect(one.filter((n) => !moved(n))).toEqual(run.map((t) => t.name).filter((n) => !moved(n)));
    expect(one.indexOf("ghost")).toBeGreaterThan(one.indexOf("host-network"));
    expect(one.indexOf("translation")).toBeGreaterThan(one.indexOf("host-network"));
    expect(one.indexOf("report")).toBeGreaterThan(one.indexOf("ghost"));
  });

  it("on the shipped 1.20 runs' times, takes less time than file order (the Service surface beside the chain)", () => {
    // run lab-20261206-011154 (recorded): in file order the chain iptables → … → program held the workers
    const fileOrder = simulatedSeconds(run, run, 4, shipped);
    const ordered = simulatedSeconds(startOrder(run, 4, shipped), run, 4, shipped);
    // beside kube-proxy ghost's 84.6 s (windows spoiled by the surface topics' Services, which it follows now) set
    // the time either way; kpr's alone shows the gain
    expect(ordered).toBeLessThanOrEqual(fileOrder);
    const kpr = JSON.parse(
      readFileSync(join(import.meta.dirname, "bundles", "1.20", "kpr", "bundle.json"), "utf8"),
    ) as { phases: Record<string, number> };
    const kprTimes = (t: string) => kpr.phases[`spec ${t}`] ?? 10;
    expect(simulatedSeconds(startOrder(run, 4, kprTimes), run, 4, kprTimes)).toBeLessThan(
      simulatedSeconds(run, run, 4, kprTimes) - 10,
    );
    // the lifecycle runs' times (the newest full runs): the longest topic of the stretch, lifecycle, is taken
    // before the chain's scale, where on the times before them (10 s for a topic without one) it came after it
    const order = startOrder(run, 4, shipped).map((t) => t.name);
    expect(order.indexOf("lifecycle")).toBeLessThan(order.indexOf("scale"));
    const before = recordedSeconds([join(import.meta.dirname, "bundles", "1.20")]);
    const old = startOrder(run, 4, before).map((t) => t.name);
    expect(old.indexOf("lifecycle")).toBeGreaterThan(old.indexOf("scale"));
  });

  it("with equal times, still starts what follows nobody beside the chain rather than after it", () => {
    const same = () => 10;
    expect(simulatedSeconds(startOrder(run, 4, same), run, 4, same)).toBeLessThanOrEqual(
      simulatedSeconds(run, run, 4, same),
    );
  });

  it("recordedSeconds reads bundle.json's spec phases, the longer mode's; 10 s for a topic without one", () => {
    const dir = mkdtempSync(join(tmpdir(), "recorded-seconds-"));
    try {
      for (const [m, s] of [
        ["kpr", 3],
        ["kube-proxy", 7],
      ] as const) {
        // the shipped 1.20 bundle.json with its phases replaced (WRITTEN BY US)
        const meta = JSON.parse(
          readFileSync(join(import.meta.dirname, "bundles", "1.20", m, "bundle.json"), "utf8"),
        ) as Record<string, unknown>;
        mkdirSync(join(dir, m));
        writeFileSync(join(dir, m, "bundle.json"), JSON.stringify({ ...meta, phases: { "spec ghost": s } }));
      }
      const est = recordedSeconds([dir]);
      expect(est("ghost")).toBe(7);
      expect(est("holder")).toBe(10);
      expect(recordedSeconds([join(dir, "none")])("ghost")).toBe(10);
      // a newer run's time wins where it has the topic; the older run still answers for the others
      const newer = mkdtempSync(join(tmpdir(), "recorded-seconds-newer-"));
      try {
        const meta = JSON.parse(readFileSync(join(dir, "kpr", "bundle.json"), "utf8")) as Record<
          string,
          unknown
        >;
        mkdirSync(join(newer, "kpr"));
        writeFileSync(
          join(newer, "kpr", "bundle.json"),
          JSON.stringify({ ...meta, createdAt: "2099-01-01T00:00:00.000Z", phases: { "spec holder": 42 } }),
        );
        const both = recordedSeconds([dir, newer]);
        expect([both("holder"), both("ghost")]).toEqual([42, 7]);
        expect(recordedSeconds([newer, dir])("holder")).toBe(42);
      } finally {
        rmSync(newer, { recursive: true, force: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a run in two parts, for two jobs at once (clusters/parts.ts; package.json's scripts are held to it in cli/run.test.ts)", () => {
  const folderTopic = (f: string) => /^suites\/\d\d-([a-z0-9-]+)/.exec(f)?.[1] ?? f;

  it("the disruptions part is config and the topics alone after the invariants; the other part every other topic", () => {
    const disruptions = PARTS.disruptions.map(folderTopic);
    const excluded = PARTS["without-disruptions"]
      .filter((a) => a !== "--exclude")
      .map((a) => folderTopic(a.replace(/\/\*\*$/, "")));
    const run = TOPICS.filter((t) => !t.runsIn);
    const after = run.slice(run.findIndex((t) => t.name === "invariants") + 1);
    expect(after.every((t) => "alone" in t.schedule)).toBe(true);
    expect(disruptions).toEqual(["config", ...after.map((t) => t.name)]);
    expect(excluded).toEqual(after.map((t) => t.name));
    // each folder the parts name is a topic's
    for (const f of [...disruptions, ...excluded]) expect(TOPICS.map((t) => t.name)).toContain(f);
  });
});
