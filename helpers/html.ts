/**
 * HTML (and inline SVG) that escapes by construction. Every page and chart the suite writes is built with the
 * `html` tag: each value put into a template is escaped for the place it lands — `escapeText` between tags,
 * `escapeAttr` inside a quoted attribute value — unless it is itself `Html` made by the tag (a fragment), so a
 * string from a bundle can never become markup. The tag reads its template's static parts (once per template)
 * and refuses, as a programming error, a value where no escaping makes it safe: an unquoted attribute, an
 * event-handler or style attribute, a URL attribute that is not a link within the page, inside a comment,
 * `<script>` or `<style>`, or in place of a tag or attribute name.
 *
 * Why our own and not a templating library: the pages are built from TypeScript template literals already, and
 * what they need is escaping that cannot be forgotten plus a check of where values go; this is about 150 lines
 * with no dependency, typed (a fragment is `Html`, a plain string never is), and it covers the inline SVG the
 * same way. A library (lit-html's server renderer, a JSX runtime) would mean rewriting every page in its idiom
 * and its escaping rules for SVG and attributes would still have to be checked here.
 */
import { createHash } from "node:crypto";
import { xmlChars } from "./output.ts";

const MADE = Symbol("made by html`…`");

/** Markup made by the `html` tag (or `attr`, `inlineStyle`, `inlineScript`): inserted as it is. */
export class Html {
  readonly text: string;
  constructor(token: symbol, text: string) {
    if (token !== MADE) throw new Error("Html is made by html`…`, never from a string");
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** A value a template takes: escaped when it is not Html; nothing for null, undefined and false. */
export type Value = Html | string | number | boolean | null | undefined | readonly Value[];

/**
 * Text between tags: `&`, `<` and `>` as entities, and what XML forbids (a C0 control, a lone surrogate, U+FFFE)
 * as U+FFFD, so that an SVG written alone (`summary --svg`) stays well-formed XML (helpers/output.ts `xmlChars`).
 */
export function escapeText(s: string): string {
  return xmlChars(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A quoted attribute value: `&`, `<`, `>`, `"` and `'` as entities. */
export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** Attributes whose value is a URL: only a link within the page (`#…`) is written. */
const URL_ATTRS = new Set([
  "href",
  "xlink:href",
  "src",
  "srcset",
  "action",
  "formaction",
  "poster",
  "data",
  "background",
  "cite",
  "ping",
]);

class HtmlTemplateError extends Error {
  constructor(message: string) {
    super(`html\`…\`: ${message}`);
    this.name = "HtmlTemplateError";
  }
}

/** Where a hole of a template is: text, inside a tag (attributes), or in a quoted attribute's value. */
type Hole =
  | { kind: "text" }
  | { kind: "tag" }
  | { kind: "attr"; name: string; url: "checked" | "starts"; valueStart: boolean }
  | { kind: "bad"; why: string };

const RAW_TEXT = new Set(["script", "style"]);

/** The holes of a template, found by reading its static parts as an HTML tokenizer would (simplified). */
function holesOf(strings: readonly string[]): Hole[] {
  type State =
    | { s: "text" }
    | { s: "tag"; tag: string; closing: boolean }
    | { s: "value"; tag: string; closing: boolean; name: string; quote: string; start: string }
    | { s: "unquoted"; tag: string; closing: boolean; name: string }
    | { s: "comment" }
    | { s: "raw"; tag: string };
  let st: State = { s: "text" };
  const holes: Hole[] = [];
  strings.forEach((part, k) => {
    let i = 0;
    let valueSoFar = st.s === "value" ? st.start : "";
    while (i < part.length) {
      const c = part[i] as string;
      if (st.s === "text") {
        if (c === "<") {
          if (part.startsWith("<!--", i)) {
            st = { s: "comment" };
            i += 4;
            continue;
          }
          const m = /^<(\/?)([A-Za-z!][-A-Za-z0-9:]*)/.exec(part.slice(i, i + 64));
          if (m) {
            st = { s: "tag", tag: (m[2] as string).toLowerCase(), closing: m[1] === "/" };
            i += m[0].length;
            continue;
          }
        }
        i++;
      } else if (st.s === "comment") {
        const end = part.indexOf("-->", i);
        if (end < 0) i = part.length;
        else {
          st = { s: "text" };
          i = end + 3;
        }
      } else if (st.s === "raw") {
        const end = part.toLowerCase().indexOf(`</${st.tag}`, i);
        if (end < 0) i = part.length;
        else {
          st = { s: "tag", tag: st.tag, closing: true };
          i = end + 2 + st.tag.length;
        }
      } else if (st.s === "tag") {
        if (c === ">") {
          st = !st.closing && RAW_TEXT.has(st.tag) ? { s: "raw", tag: st.tag } : { s: "text" };
          i++;
          continue;
        }
        const m = /^([^\s"'>/=]+)\s*(=\s*(["']?))?/.exec(part.slice(i));
        if (m) {
          const name = (m[1] as string).toLowerCase();
          i += m[0].length;
          if (m[2] !== undefined) {
            if (m[3]) {
              st = { s: "value", tag: st.tag, closing: st.closing, name, quote: m[3], start: "" };
              valueSoFar = "";
            } else st = { s: "unquoted", tag: st.tag, closing: st.closing, name };
          }
          continue;
        }
        i++;
      } else if (st.s === "value") {
        if (c === st.quote) {
          st = { s: "tag", tag: st.tag, closing: st.closing };
          valueSoFar = "";
        } else valueSoFar += c;
        i++;
      } else {
        // an unquoted value: until whitespace or `>`
        if (/[\s>]/.test(c)) st = { s: "tag", tag: st.tag, closing: st.closing };
        else i++;
      }
    }
    if (k === strings.length - 1) return;
    // the hole after this part
    const before = part;
    let hole: Hole;
    switch (st.s) {
      case "text":
        hole = /[A-Za-z-]=["']?$/.test(before)
          ? { kind: "bad", why: "an attribute written outside a tag: use attr(name, value)" }
          : /<\/?[A-Za-z]*$/.test(before)
            ? { kind: "bad", why: "a value in place of a tag name" }
            : { kind: "text" };
        break;
      case "tag":
        hole =
          /(^|[\s"'])$/.test(before) || /<[A-Za-z][-A-Za-z0-9:]*$/.test(before)
            ? { kind: "tag" }
            : { kind: "bad", why: "a value in place of a tag or attribute name" };
        break;
      case "value": {
        const name = st.name;
        if (/^on/.test(name)) hole = { kind: "bad", why: `a value in the event handler ${name}` };
        else if (name === "style")
          hole = { kind: "bad", why: "a value in a style attribute (the page's CSP allows none)" };
        else
          hole = {
            kind: "attr",
            name,
            url: URL_ATTRS.has(name) && !valueSoFar.startsWith("#") ? "starts" : "checked",
            valueStart: valueSoFar === "",
          };
        st = { ...st, start: `${valueSoFar}\u0000` };
        break;
      }
      case "unquoted":
        hole = { kind: "bad", why: `an unquoted value of ${st.name}: quote it` };
        break;
      case "comment":
        hole = { kind: "bad", why: "a value inside a comment" };
        break;
      case "raw":
        hole = { kind: "bad", why: `a value inside <${st.tag}>: use inlineStyle/inlineScript` };
        break;
    }
    holes.push(hole);
  });
  return holes;
}

const HOLES = new WeakMap<TemplateStringsArray, Hole[]>();

function render(v: unknown, hole: Hole): string {
  if (v === null || v === undefined || v === false) return "";
  if (Array.isArray(v)) return v.map((x) => render(x, hole)).join("");
  if (v instanceof Html) {
    if (hole.kind === "attr") throw new HtmlTemplateError(`markup given as the value of ${hole.name}`);
    return v.text;
  }
  switch (hole.kind) {
    case "text":
      return escapeText(String(v));
    case "attr": {
      const s = String(v);
      if (hole.url === "starts" && hole.valueStart && !s.startsWith("#"))
        throw new HtmlTemplateError(
          `${hole.name} takes a link within the page (#…), not ${JSON.stringify(s.slice(0, 40))}`,
        );
      return escapeAttr(s);
    }
    case "tag":
      throw new HtmlTemplateError("a string inside a tag: attributes are written with attr(name, value)");
    default:
      throw new HtmlTemplateError(hole.kind === "bad" ? hole.why : "unknown place");
  }
}

/** The template tag: `html\`<td title="${t}">${text}</td>\`` — every value escaped for where it lands. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  // only a template literal's own static parts are markup (frozen, with .raw): never an array built at run time
  if (!Object.isFrozen(strings) || !Array.isArray(strings.raw))
    throw new HtmlTemplateError("called with something other than a template literal");
  let holes = HOLES.get(strings);
  if (!holes) {
    holes = holesOf(strings);
    HOLES.set(strings, holes);
  }
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) {
    const hole = holes[i] as Hole;
    if (hole.kind === "bad") throw new HtmlTemplateError(hole.why);
    out += render(values[i], hole) + (strings[i + 1] as string);
  }
  return new Html(MADE, out);
}

/** One attribute, ` name="value"`, for a tag's attribute list (nothing for null, undefined and false). */
export function attr(name: string, value: string | number | boolean | null | undefined): Html {
  if (value === null || value === undefined || value === false) return new Html(MADE, "");
  const n = name.toLowerCase();
  if (!/^[a-z_:][-a-z0-9_:.]*$/.test(n) || n.startsWith("on") || n === "style")
    throw new HtmlTemplateError(`attr(${JSON.stringify(name)}): not an attribute a page of ours writes`);
  const s = value === true ? "" : String(value);
  if (URL_ATTRS.has(n) && !s.startsWith("#"))
    throw new HtmlTemplateError(`${n} takes a link within the page (#…)`);
  return new Html(MADE, ` ${n}="${escapeAttr(s)}"`);
}

/** Fragments joined (with `sep` between them, itself markup). */
export function join(parts: readonly Html[], sep: Html | string = ""): Html {
  return new Html(MADE, parts.map((p) => p.text).join(sep instanceof Html ? sep.text : escapeText(sep)));
}

/** The page's own style, inline: only from our code (never a value of a bundle). */
export function inlineStyle(css: string): Html {
  if (/<\/style|<!--/i.test(css)) throw new HtmlTemplateError("a style that would end its own element");
  return new Html(MADE, `<style>${css}</style>`);
}

/** The page's own script, inline: only from our code (never a value of a bundle). */
export function inlineScript(js: string): Html {
  if (/<\/script|<!--/i.test(js)) throw new HtmlTemplateError("a script that would end its own element");
  return new Html(MADE, `<script>${js}</script>`);
}

/** `'sha256-…'` of an inline style's or script's text, as a Content-Security-Policy source. */
export function cspHash(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * A strict Content-Security-Policy for a self-contained page: nothing may load or run but the page's own
 * inline styles and scripts, each allowed by its hash; no base URL, no form target, no frames, no plugins.
 */
export function contentSecurityPolicy(opts: { styles: string[]; scripts: string[] }): string {
  return [
    "default-src 'none'",
    `style-src ${opts.styles.map(cspHash).join(" ") || "'none'"}`,
    `script-src ${opts.scripts.map(cspHash).join(" ") || "'none'"}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}
