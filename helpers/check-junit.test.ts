import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SaxesParser } from "saxes";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../cli/main.ts";
import { summarize } from "../scripts/junit-summary.ts";
import { TOPICS } from "../suites/topics.ts";
import { checkBundle } from "./check.ts";
import { formatCheck } from "./check-format.ts";
import { checkJUnit } from "./check-junit.ts";
import { MESSAGES_RUN_CHARS, MessageBudget } from "./records/evidence.ts";
import { BundleCopies, editJson, KUBE_SVC_LINE, shipped } from "./testing/tamper.ts";
import { parseXmlStrictly } from "./testing/xml.ts";

interface Case {
  suite: string;
  name: string;
  failure?: { message: string; text: string };
  skipped?: { message: string; text: string };
  properties: Record<string, string>;
}

/** The test cases of a JUnit document as a strict XML reader sees them (entities decoded). */
function cases(xml: string): Case[] {
  parseXmlStrictly(xml);
  const out: Case[] = [];
  const p = new SaxesParser();
  let suite = "";
  let c: Case | null = null;
  let inside: "failure" | "skipped" | null = null;
  p.on("opentag", (t) => {
    const a = t.attributes as Record<string, string>;
    if (t.name === "testsuite") suite = a.name ?? "";
    if (t.name === "testcase") c = { suite, name: a.name ?? "", properties: {} };
    if (c && (t.name === "failure" || t.name === "skipped")) {
      inside = t.name;
      c[t.name] = { message: a.message ?? "", text: "" };
    }
    if (c && t.name === "property") c.properties[a.name ?? ""] = a.value ?? "";
  });
  p.on("text", (s) => {
    if (c && inside) (c[inside] as { text: string }).text += s;
  });
  p.on("closetag", (t) => {
    if (t.name === "failure" || t.name === "skipped") inside = null;
    if (t.name === "testcase" && c) {
      out.push(c);
      c = null;
    }
  });
  p.write(xml).close();
  return out;
}

const copies = new BundleCopies();
afterAll(() => copies.cleanup());

describe("check --junit: a bundle's verdicts as JUnit, offline", () => {
  it("a known issue is a skipped test case naming it, its versions and its upstream reference; a skip carries its reason; a pass is a test case alone", async () => {
    const r = await checkBundle(shipped("1.20/kube-proxy"), TOPICS);
    const got = cases(checkJUnit([r]));
    expect(got).toHaveLength(r.verdicts.length);
    const known = r.verdicts.filter((v) => v.status === "known-issue");
    expect(known.length).toBeGreaterThan(0);
    for (const v of known) {
      const c = got.find((x) => x.name.startsWith(`${v.id}: `)) as Case;
      expect(c.failure, v.id).toBeUndefined();
      expect(c.skipped?.message, v.id).toMatch(/^known issue of Cilium 1\.20/);
      expect(c.skipped?.message, v.id).toContain(v.deviation?.upstream as string);
      expect(c.skipped?.message, v.id).toContain(`expected ${v.expected}, observed ${v.observed}`);
      expect(c.properties["known-issue"], v.id).toContain(v.deviation?.claim as string);
    }
    for (const v of r.verdicts.filter((x) => x.status === "skip")) {
      const c = got.find((x) => x.name.startsWith(`${v.id}: `)) as Case;
      expect(c.skipped?.message, v.id).not.toBe("");
      expect(c.skipped?.message, v.id).not.toMatch(/^known issue/);
    }
    for (const v of r.verdicts.filter((x) => x.status === "pass")) {
      const c = got.find((x) => x.name.startsWith(`${v.id}: `)) as Case;
      expect(c.failure ?? c.skipped, v.id).toBeUndefined();
      expect(c.properties, v.id).toEqual({ expected: v.expected, observed: v.observed });
    }
  });

  it("a failure carries expected and observed, and the raw line its evidence quotes", async () => {
    const dir = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
      t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
    );
    const got = cases(checkJUnit([await checkBundle(dir, TOPICS)]));
    const c = got.find((x) => x.name.startsWith("iptables.kube-svc-lines: ")) as Case;
    expect(c.failure?.message).toBe("expected 0, observed 1");
    expect(c.failure?.text).toMatch(/^expected 0, observed 1\n/);
    expect(c.failure?.text).toContain(KUBE_SVC_LINE);
    expect(c.failure?.text).toMatch(/raw\/iptables\/\d+-iptables-save\.txt(\.gz)?:\d+ {2}-A KUBE-SERVICES/);
    expect(got.filter((x) => x.failure).length).toBeGreaterThanOrEqual(1);
  });

  it("a change in a new minor is a failure saying so, with the run's changed-in-new-minor and assumed-from properties (issue 38)", async () => {
    // written by us: a shipped 1.20 bundle relabelled 1.21.0, its policy map under the pre-1.20 name
    const dir = copies.tampered("1.20/kpr", "program", ["cilium-dbg", "map", "list"], (t) =>
      t.replaceAll("cilium_policy_v3_", "cilium_policy_v2_"),
    );
    editJson(dir, "bundle.json", (m) => ({ ...m, cilium: "1.21.0", ciliumMinor: "1.21" }));
    const r = await checkBundle(dir, TOPICS);
    expect(r.verdicts.filter((v) => v.status === "changed").map((v) => v.id)).toEqual(["program.policy-map"]);
    const xml = checkJUnit([r]);
    const got = cases(xml);
    const c = got.find((x) => x.name.startsWith("program.policy-map: ")) as Case;
    expect(c.failure?.message).toBe(
      "changed in the new minor (assumed from 1.20): expected cilium_policy_v3_<id:05>, observed cilium_policy_v2_<id:05>",
    );
    expect(c.properties["changed-in-new-minor"]).toMatch(/^changed in the new minor — /);
    expect(c.properties["assumed-from"]).toBe("assumed from 1.20");
    // every verdict says what it was judged against
    expect(got.every((x) => x.properties["assumed-from"] === "assumed from 1.20")).toBe(true);
    expect(xml).toMatch(/<testsuite [^>]*failures="1"/);
    // CI's closing summary names it among the failures
    const s = summarize(xml);
    expect(s.changed).toEqual([c.name]);
    expect(s.failed).toBe(1);
  });

  it("a bundle's markup and characters XML forbids stay text: the report parses, the line reads back", async () => {
    // in the rule's comment, where iptables-save's parser takes any text (a line it refuses is never quoted)
    const hostile = KUBE_SVC_LINE.replace(
      "cluster IP",
      "]]></failure></testcase><testcase name='x'>&amp; \uFFFE",
    );
    const dir = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
      t.replace("COMMIT", `${hostile}\nCOMMIT`),
    );
    const xml = checkJUnit([await checkBundle(dir, TOPICS)]);
    const got = cases(xml);
    const c = got.find((x) => x.name.startsWith("iptables.kube-svc-lines: ")) as Case;
    expect(c.failure?.text).toContain("]]></failure></testcase><testcase name='x'>&amp; \uFFFD");
    expect(got.filter((x) => x.name === "x")).toEqual([]);
  });

  it("the CLI writes FILE and says so; a FILE inside the bundle is one line, exit 2, before any work", async () => {
    const out = mkdtempSync(join(tmpdir(), "dpc-junit-"));
    try {
      let err = "";
      const io = {
        out: () => {},
        err: (s: string) => {
          err += s;
        },
        readStdin: async () => "",
      };
      const file = join(out, "junit.xml");
      expect(await main(["check", shipped("1.20/kube-proxy"), "--junit", file], io)).toBe(0);
      expect(err).toBe(`wrote ${file}\n`);
      const got = cases(readFileSync(file, "utf8"));
      expect(got.filter((c) => c.skipped?.message.startsWith("known issue")).length).toBe(5);
      err = "";
      const inside = join(shipped("1.20/kube-proxy"), "junit.xml");
      expect(await main(["check", shipped("1.20/kube-proxy"), "--junit", inside], io)).toBe(2);
      expect(err.trim().split("\n")).toHaveLength(1);
      expect(err).toMatch(/--junit .* is inside the bundle/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("every failure's message together under the run's cap, in check's text and in JUnit (issue 45)", async () => {
    const r = await checkBundle(shipped("1.20/kpr"), TOPICS);
    // each message already bounded (50 items of 1000 characters): a folder of bundles multiplies them
    const message = `[kpr] x: fails\n${"  raw/x.txt:1  y\n".repeat(4000)}`;
    const failing = { ...r, verdicts: r.verdicts.map((v) => ({ ...v, status: "fail" as const, message })) };
    const results = Array.from({ length: 4 }, () => failing);
    const budget = new MessageBudget();
    const text = results.map((x) => formatCheck(x, [], budget)).join("\n");
    expect(text.length).toBeLessThan(MESSAGES_RUN_CHARS + 2_000_000);
    expect(text).toContain("(the rest not shown: this run printed 2 MiB of messages;");
    expect(budget.cut).toBeGreaterThan(0);
    const xml = checkJUnit(results);
    expect(xml.length).toBeLessThan(MESSAGES_RUN_CHARS + 3_000_000);
    expect(() => parseXmlStrictly(xml)).not.toThrow();
  });
});
