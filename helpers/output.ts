/**
 * One output discipline per channel (issue 36). A bundle is untrusted input (SECURITY.md), and what the suite
 * prints from it lands in places that obey what they read: a terminal (escape sequences), GitHub's runner (a
 * line starting with `::` is a workflow command, `##[` anywhere in a line too), a step summary or a PR comment
 * (HTML, links, @mentions), an XML file (a character XML 1.0 forbids makes it unreadable). Each channel has its
 * escaper here, and the text made for it is typed:
 *
 * - `terminal\`…\`` makes a `TerminalText`: every value put into it is shown, never obeyed (control, C1,
 *   bidirectional and line-separator characters as `\u{…}`, a newline included, so a value never starts a line
 *   of its own; `##[` as `##\u{5b}`). `terminalLines` joins lines.
 * - `markdown\`…\`` makes a `MarkdownText`: every value is one inert run of text (HTML, link, image, code and
 *   table marks escaped, newlines folded, @mentions broken by a zero-width space, controls shown).
 * - `annotation(…)` makes a `WorkflowCommand`: the runner's own escaping (data: `%`, CR, LF; properties also
 *   `:` and `,`), the message cut under GitHub's ~4 KB; `annotationsCapped` keeps to the 10 GitHub shows per kind.
 * - `xmlChars` replaces what XML 1.0 forbids (the HTML/SVG template tag and the JUnit report use it).
 *
 * A value is any string or number; a `TerminalText` or `MarkdownText` cannot be put into a template as a value
 * (a type error: it would be escaped twice), only joined. The CLI prints nothing but these types (cli/print.ts,
 * held to it by cli/output-discipline.test.ts), and its printer guards every line once more (`guardLines`).
 */

declare const CHANNEL: unique symbol;
/** Text made for a terminal (and so for a CI log): bundle strings in it are shown, not obeyed. */
export type TerminalText = string & { readonly [CHANNEL]: "terminal" };
/** Markdown for a step summary or a PR comment: bundle strings in it are inert text. */
export type MarkdownText = string & { readonly [CHANNEL]: "markdown" };
/** One workflow command line the suite writes itself (`::error title=…::…`). */
export type WorkflowCommand = string & { readonly [CHANNEL]: "command" };
/** What a template takes as a value: anything but text already made for a channel. */
export type Value = (string & { readonly [CHANNEL]?: never }) | number | boolean | null | undefined;

const show = (c: string) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`;

/** Every control character but tab (newline and CR included), DEL, C1, the line separators, the bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is shown
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same but newline: what a whole document may hold only as its own line breaks. */
const CONTROL_BUT_NEWLINE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is shown
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Characters a terminal draws as nothing, or that reorder what is drawn around them (issue 45): the bidi marks
 * (U+200E/200F, U+061C), zero-width spaces and joiners (U+200B–U+200D, U+2060, U+FEFF), the invisible operators
 * (U+2061–U+2064), the deprecated format characters (U+206A–U+206F), the soft hyphen, the Mongolian and
 * variation selectors of old, fillers drawn as blanks (U+115F/1160, U+3164, U+FFA0), interlinear annotation marks
 * and the tag characters (U+E0000–U+E007F). Text holding them reads as other text than it is: `1.20.2` with a
 * U+200B is not `1.20.2`, and an RLM turns a line around.
 */
const INVISIBLE =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each is matched alone, to be shown (U+034F combines)
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2060-\u2064\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;
/**
 * The same but U+200B: the printer's last guard leaves the zero-width space markdownText itself puts after an `@`
 * and a `#` (what breaks a mention or a reference), while every bundle value had it shown by terminalText.
 */
const INVISIBLE_BUT_ZWSP =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each is matched alone, to be shown (U+034F combines)
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200c-\u200f\u2060-\u2064\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/** One value in terminal text: shown, never obeyed, never a line of its own, nothing in it invisible. */
export function terminalText(s: unknown): string {
  return String(s).replace(CONTROL, show).replace(INVISIBLE, show).replace(/##\[/g, "##\\u{5b}");
}

/**
 * The last guard of every line the CLI prints, whatever made it: control characters but newline and tab shown,
 * `##[` broken, and a line that would start (after its indentation) with `::` has its first colon shown. Only
 * `annotation` lines, printed apart, start with `::`.
 */
export function guardLines(doc: string): string {
  return doc
    .replace(CONTROL_BUT_NEWLINE, show)
    .replace(INVISIBLE_BUT_ZWSP, show)
    .replace(/##\[/g, "##\\u{5b}")
    .replace(/^(\s*):(?=:)/gm, "$1\\u{3a}");
}

function tag<T extends string>(escapeValue: (s: string) => string) {
  return (strings: TemplateStringsArray, ...values: Value[]): T => {
    let out = strings[0] as string;
    for (let i = 0; i < values.length; i++)
      out += escapeValue(String(values[i])) + (strings[i + 1] as string);
    return out as T;
  };
}

/** Terminal text: the template's own text as written, each value shown (terminalText). */
export const terminal = tag<TerminalText>(terminalText);

/** Lines of terminal text, one after the other (no newline at the end). */
export function terminalLines(lines: readonly TerminalText[]): TerminalText {
  return lines.join("\n") as TerminalText;
}

/**
 * The suite's own multi-line text (usage, help, a plan, a parser's notes on input the user gave): each line kept
 * a line, each line's content shown as terminal text. Not for a bundle's strings: use `terminal`.
 */
export function ownLines(s: string): TerminalText {
  return s.split("\n").map(terminalText).join("\n") as TerminalText;
}

/** @user, @org/team: GitHub pings whoever a step summary or a comment names. */
const MENTION = /@(?=[A-Za-z0-9])/g;

/**
 * What GitHub's renderer turns into a link with no mark around it (issue 45): a URL's `://` (http, https, ftp…),
 * `www.`, and references to an issue or pull request (`#12`, `owner/repo#12`, `GH-12`). An e-mail address is
 * broken with the mentions (its `@`).
 */
const AUTOLINK = /(:)(?=\/\/)|\b(www)(?=\.)|(#|\bGH-)(?=\d)/gi;

/**
 * One value in markdown (a table cell, a heading, a list item): it stays one run of plain text. `|` would split
 * a cell and a newline end the row; `<`, `>` and `&` would be HTML to the renderer; `[`, `]`, `` ` `` and `!`
 * would make links, images or code; `@name` would ping someone and a bare URL or `owner/repo#12` would be a link
 * (a zero-width space after the `@`, the `:` of `://`, the `www`, the `#`); controls and invisible characters are
 * shown as in terminal text (the markdown is printed on a terminal too), before the zero-width spaces go in.
 */
export function markdownText(s: unknown): string {
  return terminalText(
    String(s)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/([|[\]`!\\])/g, "\\$1")
      .replace(/\r?\n/g, " "),
  )
    .replace(MENTION, "@\u200b")
    .replace(AUTOLINK, (m) => `${m}\u200b`);
}

/** A value to show as a markdown code span (a path, a property's id): see `code`. */
export interface CodeSpan {
  readonly code: string;
}

/** `code(path)` in a `markdown` template: a code span of it (its backticks and line breaks made spaces). */
export const code = (s: string): CodeSpan => ({ code: s });

/**
 * Markdown: the template's own marks as written, each value inert text (markdownText), or a code span (`code`):
 * a code span shows its text as it is (no HTML, link or mention in it), so only what could end it (a backtick,
 * a line break) or split a table cell (`|`) is changed.
 */
export function markdown(strings: TemplateStringsArray, ...values: (Value | CodeSpan)[]): MarkdownText {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const text =
      typeof v === "object" && v !== null
        ? `\`${terminalText(v.code.replace(/[`\r\n]/g, " ")).replace(/\|/g, "\\|")}\``
        : markdownText(v);
    out += text + (strings[i + 1] as string);
  }
  return out as MarkdownText;
}

/** Markdown lines, one after the other (no newline at the end). */
export function markdownLines(lines: readonly MarkdownText[]): MarkdownText {
  return lines.join("\n") as MarkdownText;
}

/** A markdown table row of cells made with the `markdown` tag: `| a | b |`. */
export function markdownRow(cells: readonly MarkdownText[]): MarkdownText {
  return `| ${cells.join(" | ")} |` as MarkdownText;
}

/** A markdown table's separator row for `columns` columns: `|---|---|`. */
export function markdownSeparator(columns: number): MarkdownText {
  return `|${"---|".repeat(columns)}` as MarkdownText;
}

/**
 * What one markdown document may take of a step summary: GitHub takes 1 MiB per step (more is refused, with an
 * error annotation), and the workflow's steps append up to four (a check per bundle, the measurements).
 */
export const STEP_SUMMARY_DOCUMENT_BYTES = 256 * 1024;

/** A markdown document cut at a line under `cap` bytes, with a note saying so; unchanged when it fits. */
export function capMarkdown(md: MarkdownText, cap = STEP_SUMMARY_DOCUMENT_BYTES): MarkdownText {
  if (Buffer.byteLength(md) <= cap) return md;
  const note = `\n\n*(cut at ${Math.floor(cap / 1024)} KiB: a GitHub step summary takes 1 MiB per step; the command's text output, or \`report\`, has all of it)*\n`;
  const room = cap - Buffer.byteLength(note);
  let cut = Buffer.from(md).subarray(0, room).toString("utf8");
  // the last whole line (a cut character at the end decodes to U+FFFD: the line goes with it)
  cut = cut.slice(0, Math.max(0, cut.lastIndexOf("\n")));
  return `${cut}${note}` as MarkdownText;
}

/**
 * What one command's markdown may take in all (issue 45: `check DIR --markdown` cut each bundle's document at
 * 256 KiB, but fourteen bundles passed GitHub's 1 MiB per step): three documents' worth, the fourth left to the
 * step's other writers (the workflow's measurements).
 */
export const STEP_SUMMARY_RUN_BYTES = 3 * STEP_SUMMARY_DOCUMENT_BYTES;

/** A document too small to be worth starting: past this little room, the rest are counted instead. */
const LEAST_DOCUMENT_BYTES = 4 * 1024;

/**
 * The markdown documents of one command (one per bundle), together under STEP_SUMMARY_RUN_BYTES: each cut to its
 * own share and to what is left, then, once too little is left, left out and counted; `note` says what was cut.
 */
export class MarkdownBudget {
  private left: number;
  private skipped = 0;
  private cut = 0;

  constructor(total = STEP_SUMMARY_RUN_BYTES) {
    // room kept for the closing note
    this.left = total - 1024;
  }

  /** `md` as it may be printed, or null when it is left out (too little room left: counted for `note`). */
  take(md: MarkdownText): MarkdownText | null {
    if (this.left < LEAST_DOCUMENT_BYTES) {
      this.skipped++;
      return null;
    }
    const capped = capMarkdown(md, Math.min(STEP_SUMMARY_DOCUMENT_BYTES, this.left));
    if (capped !== md) this.cut++;
    this.left -= Buffer.byteLength(capped) + 1;
    return capped;
  }

  /** What was cut or left out, in one line; null when everything was printed whole. */
  note(): MarkdownText | null {
    if (this.skipped === 0 && this.cut === 0) return null;
    const what = [
      ...(this.cut > 0 ? [`${this.cut} document(s) cut`] : []),
      ...(this.skipped > 0 ? [`${this.skipped} more left out`] : []),
    ].join(", ");
    return `*(this command's markdown stops at ${STEP_SUMMARY_RUN_BYTES / 1024} KiB, under GitHub's 1 MiB per step: ${what}; the command's text output, or \`report\`, has them all)*\n` as MarkdownText;
  }
}

/** A workflow command's data, escaped as the runner's toolkit does (`%`, CR, LF). */
export function workflowData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** A workflow command's property value: as data, and `:` and `,`, which end a property. */
export function workflowProperty(s: string): string {
  return workflowData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** GitHub shows an annotation's message up to about 4 KB: longer is cut here, with a note. */
export const ANNOTATION_MESSAGE_BYTES = 4000;
/** GitHub shows at most 10 error and 10 warning annotations per step (and 10 notices). */
export const ANNOTATIONS_PER_KIND = 10;

export type AnnotationKind = "error" | "warning" | "notice";

/**
 * One annotation line, `::error title=…::message`: the title and message shown as terminal text (one line, no
 * control), escaped as the runner's toolkit escapes them, the message cut under ANNOTATION_MESSAGE_BYTES.
 */
export function annotation(kind: AnnotationKind, title: string, message: string): WorkflowCommand {
  let text = terminalText(message);
  if (Buffer.byteLength(text) > ANNOTATION_MESSAGE_BYTES) {
    const note = " … (cut: the step's log has all of it)";
    text =
      Buffer.from(text)
        .subarray(0, ANNOTATION_MESSAGE_BYTES - Buffer.byteLength(note))
        .toString("utf8")
        .replace(/\uFFFD$/, "") + note;
  }
  return `::${kind} title=${workflowProperty(terminalText(title))}::${workflowData(text)}` as WorkflowCommand;
}

/**
 * At most ANNOTATIONS_PER_KIND of each kind (GitHub drops the rest unseen): past that, the last one shown says
 * how many more there are.
 */
export function annotationsCapped(
  list: readonly { kind: AnnotationKind; title: string; message: string }[],
  more: (n: number, kind: AnnotationKind) => { title: string; message: string },
): WorkflowCommand[] {
  const out: WorkflowCommand[] = [];
  for (const kind of ["error", "warning", "notice"] as const) {
    const of = list.filter((a) => a.kind === kind);
    const shown = of.length > ANNOTATIONS_PER_KIND ? of.slice(0, ANNOTATIONS_PER_KIND - 1) : of;
    for (const a of shown) out.push(annotation(kind, a.title, a.message));
    if (shown.length < of.length) {
      const m = more(of.length - shown.length, kind);
      out.push(annotation(kind, m.title, m.message));
    }
  }
  return out;
}

/**
 * Text in an XML document (the JUnit report, an SVG): every character XML 1.0 forbids — C0 controls but tab,
 * newline and CR, a lone surrogate, U+FFFE and U+FFFF — replaced by U+FFFD. Entities are the caller's (the
 * html tag's escapeText / escapeAttr).
 */
export function xmlChars(s: string): string {
  return s.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "\uFFFD");
}

/** Text or a quoted attribute's value in an XML document: `xmlChars`, then the five entities. */
export function xmlText(s: string): string {
  return xmlChars(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/**
 * JSON bound for a terminal, the same data: C1, bidi, line-separator and invisible characters and `##[` as
 * `\uXXXX` escapes (JSON.stringify leaves them raw; they can only be inside strings, where the escape reads back
 * the same; an astral one as its surrogate pair).
 */
export function jsonText(json: string): string {
  const unit = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return json
    .replace(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|##\[/g, (c) =>
      c === "##[" ? "##\\u005b" : unit(c),
    )
    .replace(INVISIBLE, (c) => Array.from({ length: c.length }, (_, i) => unit(c.charAt(i))).join(""));
}
