/**
 * Text from outside the program (the cloud's messages and titles, a proxy's error page) made safe to
 * print. A terminal obeys the control characters in what it prints: a title holding ESC [2J clears the
 * screen, a line break forges a line of output, a right-to-left override shows a name backwards. Each
 * such character is shown escaped instead (\n, \x1b, \u202e), and text can be cut to a length with an
 * ellipsis, so a server cannot fill a message or a screen either.
 */

/** Ends a text that was cut. */
export const CUT_MARK = "…";

/** The marks that reorder the text around them: U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069. */
function reordersText(code: number): boolean {
  return (
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** C0 and C1 controls (ESC and the 8-bit CSI among them), DEL, and the line and paragraph separators. */
function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
}

const SHORT_ESCAPES: Record<number, string> = { 0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r" };

function escaped(code: number): string {
  const short = SHORT_ESCAPES[code];
  if (short) return short;
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * `text` with every control character and text-reordering mark escaped, and, when it would come out
 * longer than `maxChars`, cut there with CUT_MARK. A character is never cut in half, nor an escape.
 */
export function terminalSafe(text: string, maxChars = Infinity): string {
  let out = "";
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    const shown = isControl(code) || reordersText(code) ? escaped(code) : character;
    if (out.length + shown.length > maxChars) return out + CUT_MARK;
    out += shown;
  }
  return out;
}

/**
 * JSON.stringify of `value` that is safe to print: JSON already escapes the C0 controls inside strings
 * (ESC among them), and this escapes the rest as JSON escapes too (\u009b, \u202e), so the text parses
 * back to the same value. The line breaks of `indent` are JSON's own and stay.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  const json = JSON.stringify(value, null, indent) ?? "null";
  let out = "";
  for (const character of json) {
    const code = character.codePointAt(0) ?? 0;
    const unsafe = code >= 0x7f && (isControl(code) || reordersText(code));
    out += unsafe ? `\\u${code.toString(16).padStart(4, "0")}` : character;
  }
  return out;
}
