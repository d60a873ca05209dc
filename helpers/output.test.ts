/**
 * The channels' escapers (helpers/output.ts) on what a hostile bundle would put through them (issue 36); the CLI's
 * own attack tests (cli/hostile-ci.test.ts, cli/hostile-bundles.test.ts) run them end to end.
 */
import { describe, expect, it } from "vitest";
import {
  ANNOTATIONS_PER_KIND,
  annotation,
  annotationsCapped,
  capMarkdown,
  code,
  guardLines,
  jsonText,
  MarkdownBudget,
  type MarkdownText,
  markdown,
  markdownLines,
  STEP_SUMMARY_DOCUMENT_BYTES,
  STEP_SUMMARY_RUN_BYTES,
  terminal,
  xmlChars,
} from "./output.ts";
import { parseXmlStrictly } from "./testing/xml.ts";

const EVIL = "a\n::error::x\r##[warning]y\u001b[2J\u009b\u202e\u2028@octocat <b>|`";

describe("terminal text", () => {
  it("a value is shown, never obeyed, and never starts a line", () => {
    expect(terminal`  observed ${EVIL}`).toBe(
      "  observed a\\u{a}::error::x\\u{d}##\\u{5b}warning]y\\u{1b}[2J\\u{9b}\\u{202e}\\u{2028}@octocat <b>|`",
    );
    expect(terminal`${"tab\tkept"}`).toBe("tab\tkept");
  });

  it("invisible and direction marks are shown, not drawn as nothing (issue 45)", () => {
    const marks = [
      "\u200e",
      "\u200f",
      "\u061c",
      "\u200b",
      "\u200d",
      "\ufeff",
      "\u2060",
      "\u2061",
      "\u00ad",
      "\u{e0041}",
    ];
    const shownMarks = terminal`v${marks.join("")}1.20.2`;
    expect(shownMarks).toBe(
      "v\\u{200e}\\u{200f}\\u{61c}\\u{200b}\\u{200d}\\u{feff}\\u{2060}\\u{2061}\\u{ad}\\u{e0041}1.20.2",
    );
    // the printer's last guard shows them too, but the zero-width space markdown puts after a mention's `@`
    expect(guardLines(`a\u200fb\u2061c @\u200bme`)).toBe("a\\u{200f}b\\u{2061}c @\u200bme");
    const json = jsonText(JSON.stringify({ s: marks.join("") }));
    expect(json).not.toMatch(/[\u200b-\u200f\u061c\ufeff\u2060-\u2064\u00ad]|[\ud800-\udfff]/);
    expect(JSON.parse(json)).toEqual({ s: marks.join("") });
  });

  it("the printer's last guard: a line's leading `::` and any `##[` broken, the document's own newlines kept", () => {
    expect(guardLines("ok\n  ::error::x\n::y\nz ##[error] q\n\t::notice::n\n")).toBe(
      "ok\n  \\u{3a}:error::x\n\\u{3a}:y\nz ##\\u{5b}error] q\n\t\\u{3a}:notice::n\n",
    );
    expect(guardLines("fd00::1 and a::b inside a line stay")).toBe("fd00::1 and a::b inside a line stay");
  });
});

describe("markdown", () => {
  it("a value is one run of inert text: no HTML, link, table mark, newline or mention", () => {
    expect(markdown`| ${EVIL} |`).toBe(
      "| a ::error::x\\u{d}##\\[warning\\]y\\u{1b}\\[2J\\u{9b}\\u{202e}\\u{2028}@\u200boctocat &lt;b&gt;\\|\\` |",
    );
    expect(markdown`${"@org/team and me@example.org"}`).toBe("@\u200borg/team and me@\u200bexample.org");
    expect(markdown`${code("a`b|c\nd")}`).toBe("`a b\\|c d`");
  });

  it("a value makes no autolink: bare URLs, www., #12, owner/repo#12, GH-12 (issue 45)", () => {
    const md = markdown`${"see https://evil.example/x, ftp://f.example, www.evil.example, #12, cilium/cilium#48578 and GH-7; 1.20 is #1"}`;
    expect(md).toBe(
      "see https:\u200b//evil.example/x, ftp:\u200b//f.example, www\u200b.evil.example, #\u200b12, cilium/cilium#\u200b48578 and GH-\u200b7; 1.20 is #\u200b1",
    );
    expect(md).not.toMatch(/:\/\/|\bwww\.|#\d|GH-\d/);
    // an invisible character in the value is shown before the zero-width spaces markdown adds go in
    expect(markdown`${"a\u200bb @c"}`).toBe("a\\u{200b}b @\u200bc");
  });

  it("a document past its share of the step summary is cut at a line, with a note, under the cap", () => {
    const line = markdown`| ${"x".repeat(1000)} |`;
    const big = markdownLines(Array.from({ length: 400 }, () => line));
    const cut = capMarkdown(big);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(STEP_SUMMARY_DOCUMENT_BYTES);
    expect(cut).toMatch(/\n\n\*\(cut at 256 KiB: a GitHub step summary takes 1 MiB per step; .*\)\*\n$/);
    expect(
      cut
        .split("\n")
        .slice(0, -3)
        .every((l) => l === line),
    ).toBe(true);
    const small = "### ok\n" as MarkdownText;
    expect(capMarkdown(small)).toBe(small);
  });
});

describe("markdown of a whole command (issue 45)", () => {
  it("fourteen bundles of 200 KiB each: together under the run's cap, under GitHub's 1 MiB, and the note says what was cut", () => {
    const line = markdown`| ${"x".repeat(1000)} |`;
    const doc = markdownLines(Array.from({ length: 200 }, () => line));
    const budget = new MarkdownBudget();
    const printed = Array.from({ length: 14 }, () => budget.take(doc));
    const note = budget.note();
    const total =
      printed.reduce((n, d) => n + (d ? Buffer.byteLength(d) + 1 : 0), 0) + Buffer.byteLength(note ?? "");
    expect(total).toBeLessThanOrEqual(STEP_SUMMARY_RUN_BYTES);
    expect(STEP_SUMMARY_RUN_BYTES).toBeLessThan(1 << 20);
    expect(printed.filter((d) => d === doc).length).toBe(3);
    expect(printed.filter((d) => d === null).length).toBe(10);
    expect(note).toMatch(
      /stops at 768 KiB, under GitHub's 1 MiB per step: 1 document\(s\) cut, 10 more left out;/,
    );
    // everything that fits: printed whole, no note
    const small = new MarkdownBudget();
    expect(small.take(line)).toBe(line);
    expect(small.note()).toBeNull();
  });
});

describe("workflow commands", () => {
  it("an annotation is one line, escaped as the runner's toolkit escapes data and properties", () => {
    expect(annotation("error", "a:b,c%\n", "50% done\r\n::add-mask::x")).toBe(
      "::error title=a%3Ab%2Cc%25\\u{a}::50%25 done\\u{d}\\u{a}::add-mask::x",
    );
  });

  it("a message over ~4 KB is cut with a note; past 10 of a kind, the tenth says how many more", () => {
    const long = annotation("warning", "t", "é".repeat(5000));
    expect(Buffer.byteLength(long)).toBeLessThan(4100);
    expect(long).toMatch(/é … \(cut: the step's log has all of it\)$/);
    const list = Array.from({ length: 25 }, (_, i) => ({
      kind: "error" as const,
      title: `p${i}`,
      message: "m",
    }));
    const capped = annotationsCapped(list, (n) => ({ title: "check", message: `${n} more` }));
    expect(capped).toHaveLength(ANNOTATIONS_PER_KIND);
    expect(capped.at(-1)).toBe("::error title=check::16 more");
    expect(annotationsCapped(list.slice(0, 10), () => ({ title: "x", message: "y" }))).toHaveLength(10);
  });
});

describe("XML and JSON", () => {
  it("what XML 1.0 forbids is replaced; the rest (astral characters included) is kept", () => {
    const s = xmlChars("a\u0001b\u001bc\uFFFEd\uFFFFe\ud800f\udc00g\tok\n😀");
    expect(s).toBe("a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg\tok\n😀");
    expect(() => parseXmlStrictly(`<a b="${s}">${s}</a>`)).not.toThrow();
  });

  it("JSON for a terminal is the same data, with nothing a terminal or the runner obeys", () => {
    const value = { s: "##[error]x\u009b\u202e\u2028" };
    const text = jsonText(JSON.stringify(value));
    expect(text).toBe('{"s":"##\\u005berror]x\\u009b\\u202e\\u2028"}');
    expect(JSON.parse(text)).toEqual(value);
  });
});
