/** What tests of printed text check: that nothing in it would make a terminal act instead of show. */

/**
 * The characters of `text` a terminal acts on instead of showing, as code points ("U+001B"): C0 and C1
 * controls, DEL, the line and paragraph separators and the marks that reorder text. Line breaks count
 * only when `lineBreaks` is true: they are the layout of a multi-line output, but never part of one quote.
 */
export function terminalControls(text: string, { lineBreaks = false } = {}): string[] {
  const found: string[] = [];
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code === 0x0a && !lineBreaks) continue;
    const control =
      code < 0x20 ||
      (code >= 0x7f && code <= 0x9f) ||
      code === 0x2028 ||
      code === 0x2029 ||
      code === 0x061c ||
      code === 0x200e ||
      code === 0x200f ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069);
    if (control) found.push(`U+${code.toString(16).toUpperCase().padStart(4, "0")}`);
  }
  return found;
}
