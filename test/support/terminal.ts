/** What tests of printed text check: that nothing in it would make a terminal act instead of show. */

/**
 * The code points a terminal acts on: C0 controls (the line break apart), DEL and the C1 controls (the
 * 8-bit CSI among them), the line and paragraph separators, and the marks that reorder text.
 */
const ACTED_ON: readonly (readonly [number, number])[] = [
  [0x00, 0x09],
  [0x0b, 0x1f],
  [0x7f, 0x9f],
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x2028, 0x2029],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

/**
 * The characters of `text` a terminal acts on instead of showing, as code points ("U+001B"). Line
 * breaks count only when `lineBreaks` is true: they are the layout of a multi-line output, but never
 * part of one quote.
 */
export function terminalControls(text: string, { lineBreaks = false } = {}): string[] {
  return [...text].flatMap((character) => {
    const code = character.codePointAt(0) ?? 0;
    const acted = (code === 0x0a && lineBreaks) || ACTED_ON.some(([from, to]) => code >= from && code <= to);
    return acted ? [`U+${code.toString(16).toUpperCase().padStart(4, "0")}`] : [];
  });
}
