/**
 * The glossary in the report: docs/glossary.md (the words the CLI, the report and the docs use) as a closed section
 * of the page, linked from its header. The page links only within itself (helpers/html.ts), and travels alone (a CI
 * artifact), so the glossary goes with it rather than as a link to a file of the checkout.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Html, html } from "../html.ts";

export const GLOSSARY_MD = join(import.meta.dirname, "..", "..", "docs", "glossary.md");

/** A line's inline markdown as markup: `code`, **bold**, and a [link](…) as its text (its target is a doc page). */
function inline(s: string): Html[] {
  const out: Html[] = [];
  let last = 0;
  for (const m of s.matchAll(/`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\([^)]*\)/g)) {
    out.push(html`${s.slice(last, m.index)}`);
    if (m[1] !== undefined) out.push(html`<code>${m[1]}</code>`);
    else if (m[2] !== undefined) out.push(html`<strong>${inline(m[2])}</strong>`);
    else out.push(html`${m[3]}`);
    last = m.index + m[0].length;
  }
  out.push(html`${s.slice(last)}`);
  return out;
}

/** docs/glossary.md as the closed details element #glossary: its sections, their terms as a list, its links dropped. */
export function glossarySection(md: string = readFileSync(GLOSSARY_MD, "utf8")): Html {
  const parts: Html[] = [];
  let items: Html[] = [];
  let item: string | null = null;
  let para: string | null = null;
  const endItem = () => {
    if (item !== null) items.push(html`<li>${inline(item)}</li>`);
    item = null;
  };
  const endList = () => {
    endItem();
    if (items.length > 0) parts.push(html`<ul>${items}</ul>`);
    items = [];
  };
  const endPara = () => {
    if (para !== null) parts.push(html`<p>${inline(para)}</p>`);
    para = null;
  };
  for (const line of md.split("\n")) {
    if (/^# /.test(line) || /^\[README\]/.test(line)) continue;
    if (line.startsWith("## ")) {
      endPara();
      endList();
      parts.push(html`<h3>${line.slice(3)}</h3>`);
    } else if (line.startsWith("- ")) {
      endPara();
      endItem();
      item = line.slice(2);
    } else if (line.trim() === "") {
      endPara();
      endItem();
    } else if (item !== null) item += ` ${line.trim()}`;
    else {
      endList();
      para = para === null ? line.trim() : `${para} ${line.trim()}`;
    }
  }
  endPara();
  endList();
  return html`<details id="glossary" class="glossary"><summary>Glossary: the words this page uses (docs/glossary.md)</summary>
${parts}</details>`;
}
