/** The README as a test reads it: its sections and their code blocks. */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../../dev/self-link";

const README = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

/** The section under the heading `title`, up to the next heading of its level or above. */
export function readmeSection(title: string): string {
  const lines = README.split("\n");
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, "") === title);
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const level = lines[start].indexOf(" ");
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(" ") <= level);
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** The fenced code blocks of `text` in the given language, in order. */
export function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === language).map((m) => m[2]);
}
