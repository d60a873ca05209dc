import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  attr,
  contentSecurityPolicy,
  cspHash,
  escapeAttr,
  escapeText,
  Html,
  html,
  inlineScript,
  inlineStyle,
} from "./html.ts";

const PAYLOAD = `1.20.2" autofocus tabindex="0" onfocus="document.title='XSS'" x="<img src=x onerror=alert(1)></script>`;

describe("html`…`: escaping by construction", () => {
  it("a value between tags is text; in a quoted attribute it cannot close the quote", () => {
    const page = html`<p title="${PAYLOAD}">${PAYLOAD}</p>`.text;
    expect(page).toBe(
      `<p title="1.20.2&quot; autofocus tabindex=&quot;0&quot; onfocus=&quot;document.title=&#39;XSS&#39;&quot; x=&quot;&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;">1.20.2" autofocus tabindex="0" onfocus="document.title='XSS'" x="&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;</p>`,
    );
    expect(escapeText("a & <b>")).toBe("a &amp; &lt;b&gt;");
    expect(escapeAttr(`'"&<>`)).toBe("&#39;&quot;&amp;&lt;&gt;");
  });

  it("fragments nest as markup; a plain string never does; lists join; null, undefined and false are nothing", () => {
    const item = (s: string) => html`<li>${s}</li>`;
    expect(html`<ul>${["<a>", "b"].map(item)}</ul>${null}${undefined}${false}`.text).toBe(
      "<ul><li>&lt;a&gt;</li><li>b</li></ul>",
    );
    // a value that only looks like markup, or any other JSON a bundle may hold, is text
    const hostile = { toString: () => "<b>" } as unknown as string;
    expect(html`<p>${hostile}${42}</p>`.text).toBe("<p>&lt;b&gt;42</p>");
    expect(() => new Html(Symbol("x"), "<b>")).toThrow(/made by html/);
    const forged = ["<b>", "</b>"] as unknown as TemplateStringsArray;
    expect(() => html(forged, "x")).toThrow(/other than a template literal/);
  });

  it("attributes in a tag's list go through attr(): escaped, quoted, never an event handler, a style or a foreign URL", () => {
    expect(
      html`<svg${attr("stroke-dasharray", '6,4"/><script>')}${attr("data-x", null)}${attr("data-fail", true)}/>`
        .text,
    ).toBe('<svg stroke-dasharray="6,4&quot;/&gt;&lt;script&gt;" data-fail=""/>');
    expect(() => attr("onload", "x")).toThrow(/not an attribute/);
    expect(() => attr("style", "x")).toThrow(/not an attribute/);
    expect(() => attr("x y", "x")).toThrow(/not an attribute/);
    expect(() => attr("href", "javascript:alert(1)")).toThrow(/a link within the page/);
    expect(attr("href", "#r0o1L5").text).toBe(' href="#r0o1L5"');
  });

  it("refuses a value where escaping cannot make it safe", () => {
    const v = "x";
    const cases: [() => Html, RegExp][] = [
      [() => html`<a title=${v}>`, /unquoted value of title/],
      [() => html`<a onclick="${v}">`, /event handler onclick/],
      [() => html`<b style="${v}">`, /style attribute/],
      [() => html`<a href="${"javascript:alert(1)"}">`, /a link within the page/],
      [() => html`<svg><a xlink:href="${"data:text/html,x"}">`, /a link within the page/],
      [() => html`<script>${v}</script>`, /inside <script>/],
      [() => html`<style>${v}</style>`, /inside <style>/],
      [() => html`<!-- ${v} -->`, /inside a comment/],
      [() => html`<${v}>`, /tag name/],
      [() => html`<b ${v}>`, /a string inside a tag/],
      [() => html`<b data-${v}="1">`, /attribute name/],
      [() => html` stroke="${v}"`, /an attribute written outside a tag/],
      [() => html`<b title="${html`<i>`}">`, /markup given as the value of title/],
    ];
    for (const [make, why] of cases) expect(make).toThrow(why);
    // after a script or a comment closes, values are text again
    expect(html`<script>let a = "<b>";</script><!-- c --><p>${"<i>"}</p>`.text).toBe(
      '<script>let a = "<b>";</script><!-- c --><p>&lt;i&gt;</p>',
    );
    // a link within the page may carry anything after its #
    expect(html`<a href="#${'"><img src=x onerror=alert(1)>'}">`.text).toBe(
      '<a href="#&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">',
    );
  });

  it("the page's own style and script inline, never ending their element early; CSP hashes of their exact text", () => {
    expect(inlineStyle("a{}").text).toBe("<style>a{}</style>");
    expect(() => inlineStyle("a{}</style><script>")).toThrow(/end its own element/);
    expect(() => inlineScript("x='</script>'")).toThrow(/end its own element/);
    // echo -n "alert(1)" | openssl sha256 -binary | base64
    expect(cspHash("alert(1)")).toBe("'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='");
    expect(contentSecurityPolicy({ styles: ["a{}"], scripts: ["alert(1)"] })).toBe(
      `default-src 'none'; style-src ${cspHash("a{}")}; script-src ${cspHash("alert(1)")}; img-src 'none'; base-uri 'none'; form-action 'none'`,
    );
  });
});

describe("every part of the page is built with html`…`", () => {
  // the report's modules and the charts: no markup in a plain template literal, no hand-rolled escaping
  const root = join(import.meta.dirname);
  const files = [
    ...readdirSync(join(root, "report"))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => join(root, "report", f)),
    join(root, "measure", "charts.ts"),
    join(root, "measure", "summary.ts"),
  ];

  it("reads the modules (the scan would pass on none)", () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
    expect(readFileSync(join(root, "report", "html.ts"), "utf8")).toContain("html`<!doctype html>");
  });

  it("no untagged template literal opens a tag, and no module escapes by hand", () => {
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      const untagged = [...text.matchAll(/(^|[^A-Za-z0-9_])`\s*<[A-Za-z!/]/gm)].map((m) =>
        text.slice(m.index, m.index + 60),
      );
      expect(untagged, f).toEqual([]);
      expect(text, f).not.toMatch(/&amp;|&lt;|&quot;|\besc\(/);
    }
  });
});

describe("markdown cells (check --markdown, compare, summary)", () => {
  it("bundle text stays one cell of plain text", async () => {
    const { mdCell } = await import("./markdown.ts");
    expect(
      mdCell("a|b\n<img src=x onerror=alert(1)> ![x](http://127.0.0.1:9/) `c` & [l](javascript:x)"),
    ).toBe(
      // the URL's `://` broken by a zero-width space too: no autolink (issue 45)
      "a\\|b &lt;img src=x onerror=alert(1)&gt; \\!\\[x\\](http:\u200b//127.0.0.1:9/) \\`c\\` &amp; \\[l\\](javascript:x)",
    );
  });
});
