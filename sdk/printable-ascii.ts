/**
 * The rule for the text the client puts into every request, the API key (the Authorization header) and
 * the base URL (the request line): printable ASCII, no spaces. A header cannot carry a control
 * character or one beyond Latin-1 (undici refuses the request before sending it), and a URL silently
 * drops or percent-encodes such characters, so the request is not the one the user meant. They are
 * nearly always left by a paste: a zero-width space, a line break, a no-break space.
 */

/**
 * Why `text` breaks the rule, or undefined when it keeps it. Names the first stray character by its
 * position and code point only, so it never shows the text (an API key).
 */
export function printableAsciiProblem(text: string): string | undefined {
  const characters = [...text];
  const position = characters.findIndex((c) => c < "\x21" || c > "\x7e");
  if (position === -1) return undefined;
  return (
    "must contain only printable ASCII characters without spaces, but character " +
    `${position + 1} is ${describe(characters[position])} (often a stray character from a paste)`
  );
}

function describe(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  if (code === 0x20) return "a space";
  if (code < 0x20 || code === 0x7f) return `a control character (${hex})`;
  return `${hex}, which is not ASCII`;
}
