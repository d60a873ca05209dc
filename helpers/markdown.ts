import { markdownText } from "./output.ts";

/**
 * Text from a bundle in a markdown table cell (a CI step summary renders it): it stays one cell of plain text.
 * `|` would split the cell and a newline end the row; `<`, `>` and `&` would be HTML to the renderer; `[`, `]`,
 * `` ` `` and `!` would make links, images or code of it; `@name` would ping someone (helpers/output.ts
 * `markdownText`, which the `markdown` template tag puts every value through).
 */
export function mdCell(s: string): string {
  return markdownText(s);
}
