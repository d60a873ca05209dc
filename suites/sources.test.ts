/**
 * Sources a reader can open: every property's and topic's source is a field document's step (docs/glossary.md), an
 * upstream reference with its URL, or a file of this repository; and no declared text cites notes kept outside the
 * repository.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Source } from "../helpers/properties/types.ts";
import { RECORDED_FAILURES } from "./recorded-failures.ts";
import { PROPERTIES, TOPICS } from "./topics.ts";

const ROOT = join(import.meta.dirname, "..");

/** Notes that live beside the repository, never in it: research files, a session's notes. */
const OUTSIDE =
  /\.\.\/shared\/knowledge|\bknowledge (?:[\w-]+\.md|§)|\b(?:clusters|output-formats|peers-and-pitfalls|offline-lab|kernel-lab|house-style)\.md\b|\bissue\d+-facts\.md\b|\/work\/notes\b/;

/** Every string a declaration holds (claim, why, source, its expectations' and configuration's texts). */
function texts(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) texts(x, out);
  else if (v !== null && typeof v === "object" && !(v instanceof RegExp))
    for (const x of Object.values(v)) texts(x, out);
  return out;
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
});

/** The repository paths a repository source names (docs/…, suites/…, with an optional #anchor). */
function repositoryPaths(where: string): string[] {
  return where.match(/\b(?:docs|suites|helpers|scripts|clusters|manifests|cli)\/[\w./#-]*[\w/]/g) ?? [];
}
