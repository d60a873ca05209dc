/**
 * Text from a bundle in a markdown table cell (a CI step summary renders it): it stays one cell of plain text.
 * `|` would split the cell and a newline end the row; `<`, `>` and `&` would be HTML to the renderer; `[`, `]`,
 * `` ` `` and `!` would make links, images or code of it.
 */
export function mdCell(s: string): string {
  return String(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([|[\]`!\\])/g, "\\$1")
    .replace(/\r?\n/g, " ");
}
