/**
 * Sources a reader can open: every property's and topic's source is a field document's step (docs/glossary.md), an
 * upstream reference with its URL, or a file of this repository; no declared text cites notes kept outside the
 * repository; and a run id in a declared text or a doc page is one of a shipped bundle (or the page names none).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Source } from "../helpers/properties/types.ts";
import { RECORDED_FAILURES } from "./recorded-failures.ts";
import { PROPERTIES, TOPICS } from "./topics.ts";

const ROOT = join(import.meta.dirname, "..");
const BUNDLES = join(ROOT, "suites", "bundles");

/** Notes that live beside the repository, never in it: research files, a session's notes. */
const OUTSIDE =
  /\.\.\/shared\/knowledge|\bknowledge (?:[\w-]+\.md|§)|\b(?:clusters|output-formats|peers-and-pitfalls|offline-lab|kernel-lab|house-style)\.md\b|\bissue\d+-facts\.md\b|\/work\/notes\b/;

/** What a run id looks like: lab-20261206-011154, lab-1196, lab120b, up-119-120-kpr-r1, existing-20261203t072651, … */
const RUN_ID =
  /^(?:lab-\d{8}-\d{6}|lab-?\d{3,4}[a-z]?|lab-[a-z][a-z0-9-]*\d[a-z0-9-]*|up-\d{3}-\d{3}(?:-[a-z0-9]+)*|existing-\d{8}t\d{6}|run-\d{8}-\d{6}|[a-z-]*\d{8}t\d{6}(?:-[a-z])?|q-[a-z0-9-]+)$/;

/** Every string a declaration holds (claim, why, source, its expectations' and configuration's texts). */
function texts(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) texts(x, out);
  else if (v !== null && typeof v === "object" && !(v instanceof RegExp))
    for (const x of Object.values(v)) texts(x, out);
  return out;
}

/** The run ids of the shipped bundles (every bundle.json below suites/bundles) and the shipped folders' names. */
function shippedRunIds(): Set<string> {
  const ids = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      ids.add(e.name);
      const sub = join(dir, e.name);
      const meta = join(sub, "bundle.json");
      if (existsSync(meta)) {
        const runId = (JSON.parse(readFileSync(meta, "utf8")) as { runId?: string }).runId;
        if (runId) ids.add(runId);
      }
      if (!["raw", "records", "baseline"].includes(e.name)) walk(sub);
    }
  };
  walk(BUNDLES);
  return ids;
}

/** The run-id-shaped words of a text. */
function runIdsIn(text: string): string[] {
  return (text.match(/[A-Za-z0-9][A-Za-z0-9-]*/g) ?? []).filter((w) => RUN_ID.test(w));
}

const declared: [string, unknown][] = [
  ...TOPICS.map((t) => [`topic ${t.name}`, { title: t.title, source: t.source }] as [string, unknown]),
  ...PROPERTIES.map((p) => [p.id, p] as [string, unknown]),
  ...Object.entries(RECORDED_FAILURES).map(([b, r]) => [`recorded failure ${b}`, r] as [string, unknown]),
];

describe("sources a reader can open", () => {
  const sources: [string, Source][] = [
    ...TOPICS.filter((t) => t.source).map((t) => [`topic ${t.name}`, t.source as Source] as [string, Source]),
    ...PROPERTIES.map((p) => [p.id, p.source] as [string, Source]),
  ];

  it("every source is a field document's step, an upstream reference with its URL, or a file of this repository", () => {
    const bad: string[] = [];
    for (const [id, s] of sources) {
      const why =
        s.doc === "lab"
          ? /^step \d+$/.test(s.where) || "a lab source is `step N`"
          : s.doc === "notebook"
            ? /^§\d+$/.test(s.where) || "a notebook source is `§N`"
            : s.doc === "upstream"
              ? /https:\/\/\S+/.test(s.where) || "an upstream source names its URL"
              : s.doc === "repository"
                ? repositoryPaths(s.where).length > 0 || "a repository source names a file of the repository"
                : `unknown kind ${String(s.doc)}`;
      if (why !== true) bad.push(`${id}: ${why} (${s.doc} ${s.where})`);
      if (OUTSIDE.test(s.where)) bad.push(`${id}: cites notes outside the repository (${s.where})`);
    }
    expect(bad).toEqual([]);
  });

  it("a repository source's paths exist", () => {
    const missing = sources
      .filter(([, s]) => s.doc === "repository")
      .flatMap(([id, s]) => repositoryPaths(s.where).map((p) => [id, p] as const))
      .filter(([, p]) => !existsSync(join(ROOT, p.replace(/#.*$/, ""))));
    expect(missing).toEqual([]);
  });

  it("no declared text (claims, whys, expectations, recorded failures) cites notes outside the repository", () => {
    const bad = declared.flatMap(([id, d]) =>
      texts(d)
        .filter((t) => OUTSIDE.test(t))
        .map((t) => `${id}: ${t}`),
    );
    expect(bad).toEqual([]);
  });

  it("knows a run id when it sees one, and the shipped bundles' ids", () => {
    expect(
      runIdsIn("run lab-20261206-011154 and lab120b; up-119-120-kpr-r1, lab-1196, 20261206t001543"),
    ).toEqual(["lab-20261206-011154", "lab120b", "up-119-120-kpr-r1", "lab-1196", "20261206t001543"]);
    expect(runIdsIn("the lab cluster, up-to-date, run-to-run, kube-proxy, step 7, 1.20.2")).toEqual([]);
    const shipped = shippedRunIds();
    expect(shipped.has("lab-20261206-011154")).toBe(true);
    expect(shipped.has("up-119-120-kpr-r1")).toBe(true);
    expect(shipped.has("lab120b")).toBe(false);
  });

  it("a run id in a declared text is a shipped bundle's", () => {
    const shipped = shippedRunIds();
    const bad = declared.flatMap(([id, d]) =>
      texts(d)
        .flatMap(runIdsIn)
        .filter((r) => !shipped.has(r))
        .map((r) => `${id}: ${r}`),
    );
    expect(bad).toEqual([]);
  });

  it("a run id on a doc page or the README is a shipped bundle's, and no page cites notes outside the repository", () => {
    const shipped = shippedRunIds();
    const pages = [
      "README.md",
      ...readdirSync(join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`),
    ];
    const bad = pages.flatMap((page) => {
      const text = readFileSync(join(ROOT, page), "utf8");
      return [
        ...runIdsIn(text)
          .filter((r) => !shipped.has(r))
          .map((r) => `${page}: run id ${r} is no shipped bundle's`),
        ...(OUTSIDE.test(text)
          ? [`${page}: cites notes outside the repository (${OUTSIDE.exec(text)?.[0]})`]
          : []),
      ];
    });
    expect(bad).toEqual([]);
  });
});

/** The repository paths a repository source names (docs/…, suites/…, with an optional #anchor). */
function repositoryPaths(where: string): string[] {
  return where.match(/\b(?:docs|suites|helpers|scripts|clusters|manifests|cli)\/[\w./#-]*[\w/]/g) ?? [];
}
