/** The repository's documentation as a test reads it: any markdown file, its sections by heading, their code blocks. */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../../dev/self-link";

/** A markdown file of the repository, by its path from the root ("README.md", "docs/sdk.md"). */
export function readDoc(file: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, file), "utf8");
}

/**
 * The pages for contributors, beside the users' ones in docs/: the contracts the code relies on and the
 * architecture. They are written and checked on their own; the users' pages only link to them.
 */
export function isContributorPage(file: string): boolean {
  return file === "docs/architecture.md" || file.startsWith("docs/design/") || file === "docs/design";
}

/** Every markdown file users read: the README and the pages under docs/, as paths from the root. */
export function docFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(REPO_ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.posix.join("docs", f.split(path.sep).join("/")))
    .filter((f) => !isContributorPage(f))
    .sort();
  return ["README.md", ...docs];
}

/** The relative links of a markdown file, outside code: `[text](target)`, each target as written. */
export function relativeLinks(file: string): string[] {
  return [...withoutCode(readDoc(file)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces made hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The section of `file` under the heading `title`, up to the next heading of its level or above. */
export function docSection(file: string, title: string): string {
  const lines = withoutCode(readDoc(file)).split("\n");
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, "") === title);
  if (start < 0) throw new Error(`${file} has no section "${title}"`);
  const level = lines[start].indexOf(" ");
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(" ") <= level);
  const original = readDoc(file).split("\n");
  return original.slice(start, end < 0 ? undefined : end).join("\n");
}

/** The headings of `text` (outside code blocks), without their `#`s. */
export function headings(text: string): string[] {
  return withoutCode(text)
    .split("\n")
    .filter((line) => /^#+ /.test(line))
    .map((line) => line.replace(/^#+ /, ""));
}

/** `text` with the lines of its fenced code blocks blanked, so a `# comment` in a block is no heading. */
function withoutCode(text: string): string {
  let inBlock = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^```/.test(line)) inBlock = !inBlock;
      return inBlock || /^```/.test(line) ? "" : line;
    })
    .join("\n");
}

/** The fenced code blocks of `text` in the given language, in order. */
export function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === language).map((m) => m[2]);
}

/**
 * The file the text tells the reader to save `block` as: the last "as `NAME`" before the block
 * ("Save the program as `index.ts`:").
 */
export function savedAs(text: string, block: string): string {
  const before = text.slice(0, text.indexOf(block));
  const named = [...before.matchAll(/\bas `([\w.-]+)`/g)].at(-1);
  if (!named) throw new Error(`the text names no file to save this block as:\n${block.slice(0, 200)}`);
  return named[1];
}

/**
 * A snippet that is a whole module, runnable as written: it exports the program's function
 * (`export = ...`), or runs something at its top level (`main()`, `test(...)`). Any other snippet is a
 * piece of a program's body.
 */
export function isWholeModule(block: string): boolean {
  return /^export = |^main\(\)|^test\(/m.test(block);
}

/** A piece of a program's body that exports: the harness runs a program's function, so it cannot. */
export function exportsFromBody(block: string): boolean {
  return !isWholeModule(block) && /^export /m.test(block);
}

/**
 * What a piece of a program's body leans on without declaring: the names a reader brings from the text
 * around it (the package, Pulumi, a GPU model, a pod and an instance), in the order they depend on.
 */
const CONTEXT: [name: string, declaration: string][] = [
  ["gpucloud", `import * as gpucloud from "pulumi-gpucloud";`],
  ["pulumi", `import * as pulumi from "@pulumi/pulumi";`],
  ["gpu", `const gpu = gpucloud.getGpuOutput({ name: "4090D" });`],
  ["pod", `const pod = gpucloud.getPodOutput({ title: "ComfyUI" });`],
  [
    "worker",
    `const worker = new gpucloud.Instance("worker", { podUuid: pod.podUuid, gpuUuid: gpu.gpuUuid, gpuNums: 1 });`,
  ],
];

/**
 * A piece of a program's body as a module the TypeScript compiler can check: its imports on top, the
 * context it uses but does not declare, and its statements in the program's async function, where the
 * text says they stand.
 */
export function snippetModule(block: string): string {
  const lines = block.split("\n");
  const imports = lines.filter((line) => /^import /.test(line));
  const body = lines.filter((line) => !/^import /.test(line));
  const declares = (name: string) =>
    new RegExp(`(import \\* as|const|let|function|class) ${name}\\b|import \\{[^}]*\\b${name}\\b`).test(
      block,
    );
  const needed = new Set<string>();
  for (const [name] of [...CONTEXT].reverse()) {
    const uses = new RegExp(`\\b${name}\\b`);
    const usedByNeeded = CONTEXT.some(([other, text]) => needed.has(other) && uses.test(text));
    if (!declares(name) && (uses.test(block) || usedByNeeded)) needed.add(name);
  }
  const context = CONTEXT.filter(([name]) => needed.has(name)).map(([, text]) => text);
  const [importsOfContext, constsOfContext] = [
    context.filter((text) => text.startsWith("import ")),
    context.filter((text) => !text.startsWith("import ")),
  ];
  return [
    ...imports,
    ...importsOfContext,
    "",
    "export = async () => {",
    ...constsOfContext.map((text) => `  ${text}`),
    ...body.map((line) => (line ? `  ${line}` : line)),
    "};",
    "",
  ].join("\n");
}
