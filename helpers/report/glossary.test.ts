/**
 * The glossary a reader is pointed to: the report carries docs/glossary.md as a section its header links to, every
 * doc page and the README link to the page, and the page defines the words the report and the docs use.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { shipped } from "../testing/tamper.ts";
import { GLOSSARY_MD, glossarySection } from "./glossary.ts";
import { buildReport, renderReport } from "./html.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const GLOSSARY = readFileSync(GLOSSARY_MD, "utf8");

/** The words the report, the CLI and the docs use that a newcomer would not know. */
const TERMS = [
  "field documents",
  "lab step N",
  "source",
  "upstream",
  "this repository:",
  "mode",
  "datapath profile",
  "socket LB",
  "per-packet LB",
  "holder",
  "ghost",
  "drop profile",
  "node shell",
  "run id",
  "evidence bundle",
  "shipped bundle",
  "evidence item",
  "first raw line",
  "verdict",
  "known issue",
  "assumed from X.Y",
  "changed in the new minor",
  "stored verdicts",
  "nearest shipped bundle",
  "leg",
  "gate",
  "client stall",
];

describe("the glossary", () => {
  it("defines every term the report and the docs use (each in bold where it is defined)", () => {
    const defined = [...GLOSSARY.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1]);
    expect(TERMS.filter((t) => !defined.includes(t))).toEqual([]);
  });

  it("every doc page and the README link to it", () => {
    const pages = [
      "README.md",
      ...readdirSync(join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md") && f !== "glossary.md")
        .map((f) => `docs/${f}`),
    ];
    const linked = (page: string) =>
      readFileSync(join(ROOT, page), "utf8").includes(
        page === "README.md" ? "(docs/glossary.md)" : "(glossary.md",
      );
    expect(pages.filter((p) => !linked(p))).toEqual([]);
  });

  it("the report's section holds each term, as text (no markdown left, no link out of the page)", () => {
    const section = glossarySection().text;
    expect(section).toMatch(/^<details id="glossary"/);
    for (const t of ["field documents", "lab step N", "ghost", "holder", "leg", "known issue", "run id"])
      expect(section).toContain(`<strong>${t.replace(/&/g, "&amp;")}</strong>`);
    expect(section).not.toMatch(/\*\*|\]\(|href=/);
    expect(section).toContain("<code>lab-&lt;date&gt;-&lt;time&gt;</code>");
  });

  it("the report links to it from its header and carries it", async () => {
    const page = renderReport(await buildReport([shipped("1.20/kpr")], TOPICS));
    const header = page.slice(page.indexOf("<header>"), page.indexOf("</header>"));
    expect(header).toContain('<a href="#glossary">glossary</a>');
    expect(page).toContain('<details id="glossary"');
  });
});
