/**
 * What the CLI prints of its files (a seed's or a state file's names and values, quoted in a refusal)
 * is anyone's text, and a terminal obeys the control characters in it: ESC [2J clears the screen, a
 * right-to-left override shows a name backwards. The emulator imports nothing of the package's other
 * parts, so it keeps this small escaping of its own.
 */

/** C0 and C1 controls, DEL, the line and paragraph separators, and the marks that reorder text. */
function actsOnTerminal(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** `text` with each character a terminal would act on shown as an escape: \x1b, \u202e. */
export function terminalText(text: string): string {
  let out = "";
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (!actsOnTerminal(code)) out += character;
    else
      out +=
        code <= 0xff
          ? `\\x${code.toString(16).padStart(2, "0")}`
          : `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return out;
}
