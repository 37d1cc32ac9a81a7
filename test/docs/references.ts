/**
 * Finding the documents a file cites, and the headings a markdown file offers to cite, the way GitHub
 * renders them. A citation is a markdown link (resolved from the linking file's folder, as GitHub does),
 * or a path in prose or a code comment that names a markdown file (`docs/design/cloud-api.md#paging`) or something
 * under `docs/` (resolved from the repository root, or else from the citing file's folder).
 */
import * as fs from "node:fs";
import * as path from "node:path";

export interface Citation {
  /** The citing file, relative to the repository root. */
  file: string;
  line: number;
  /** As written: `docs/design/cloud-api.md#paging`. */
  text: string;
  /** The cited file or folder, relative to the repository root; undefined when it exists nowhere. */
  target?: string;
  /** What follows `#`, if anything. */
  anchor?: string;
}

/**
 * GitHub's anchor of a heading: its text as rendered (link targets, inline code ticks and tags gone),
 * in lower case, every character but letters, digits, `_`, `-` and spaces dropped, each space a hyphen.
 */
export function headingAnchor(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

const FENCE = /^ {0,3}(```|~~~)/;

/** The lines of a markdown text outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  let fenced = false;
  return text.split("\n").flatMap((line, index) => {
    if (FENCE.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ line: index + 1, text: line }];
  });
}

/** Every anchor a markdown text offers: its ATX headings (repeats numbered -1, -2, as GitHub does) and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (heading) {
      const base = headingAnchor(heading[1]);
      const repeats = seen.get(base) ?? 0;
      seen.set(base, repeats + 1);
      anchors.add(repeats === 0 ? base : `${base}-${repeats}`);
    }
    for (const id of text.matchAll(/<[a-z]+\s[^>]*\b(?:id|name)="([^"]+)"/gi)) anchors.add(id[1]);
  }
  return anchors;
}

/** Markdown links and images: `[text](target)`, `![alt](target "title")`, `[label]: target`. */
const LINK = /!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g;
/** A markdown file or anything under docs/, as a path in text; not part of a longer path or a URL. */
const PATH = /(?<![\w/.:-])((?:[\w.-]+\/)*[\w.-]+\.md|docs\/(?:[\w.-]*[\w-]\/?)*)(#[\w-]+)?(?![\w/-])/g;
const URL_SCHEME = /^[a-z][a-z\d+.-]*:/i;
const INLINE_CODE = /`[^`]*`/g;

/** The first candidate (relative to `root`) that exists inside the repository, normalised. */
function existing(root: string, candidates: string[]): string | undefined {
  return candidates
    .map((c) => path.posix.normalize(c).replace(/\/$/, ""))
    .find((c) => !c.startsWith("..") && fs.existsSync(path.join(root, c)));
}

function splitAnchor(target: string): { file: string; anchor?: string } {
  const hash = target.indexOf("#");
  return hash < 0 ? { file: target } : { file: target.slice(0, hash), anchor: target.slice(hash + 1) };
}

/** The markdown links of one line, resolved from the linking file's folder (a leading `/` is the root). */
function linksIn(root: string, file: string, line: number, text: string): Citation[] {
  const citations: Citation[] = [];
  for (const match of text.replace(INLINE_CODE, "").matchAll(LINK)) {
    const written = match[1] ?? match[2];
    if (written === "" || URL_SCHEME.test(written) || written.startsWith("//")) continue;
    const { file: linked, anchor } = splitAnchor(decodeURIComponent(written));
    const target =
      linked === ""
        ? file
        : existing(root, [
            linked.startsWith("/") ? linked.slice(1) : path.posix.join(path.posix.dirname(file), linked),
          ]);
    citations.push({ file, line, text: written, target, anchor });
  }
  return citations;
}

/** The paths of one line of text, resolved from the root or else from the citing file's folder. */
function pathsIn(root: string, file: string, line: number, text: string): Citation[] {
  return [...text.matchAll(PATH)].map((match) => {
    const written = match[1];
    const target = existing(root, [written, path.posix.join(path.posix.dirname(file), written)]);
    return { file, line, text: match[0], target, anchor: match[2]?.slice(1) };
  });
}

/**
 * The comment text of one line of code: what follows `//`, or a line of a block comment. Code and its
 * strings are left out: a test's fixture may name a page that is meant not to exist.
 */
function commentOf(line: string): string {
  if (/^\s*(\/\*|\*)/.test(line)) return line;
  const slashes = line.search(/(^|\s)\/\/\s/);
  return slashes < 0 ? "" : line.slice(slashes);
}

/** Every citation in `file` (relative to `root`): links and paths in markdown prose, paths anywhere else. */
export function citationsIn(root: string, file: string): Citation[] {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  if (!file.endsWith(".md")) {
    return text.split("\n").flatMap((line, index) => pathsIn(root, file, index + 1, commentOf(line)));
  }
  return proseLines(text).flatMap(({ line, text: prose }) => [
    ...linksIn(root, file, line, prose),
    ...pathsIn(root, file, line, prose.replace(LINK, "")),
  ]);
}

/** What is wrong with a citation, or undefined when it resolves: the file must exist, and a heading cited in it. */
export function problemOf(
  root: string,
  citation: Citation,
  anchors: (file: string) => Set<string>,
): string | undefined {
  const where = `${citation.file}:${citation.line}: ${citation.text}`;
  if (citation.target === undefined) return `${where}: no such file in the repository`;
  if (citation.anchor === undefined || !citation.target.endsWith(".md")) return undefined;
  if (!fs.statSync(path.join(root, citation.target)).isFile()) return undefined;
  return anchors(citation.target).has(citation.anchor)
    ? undefined
    : `${where}: ${citation.target} has no heading #${citation.anchor}`;
}
