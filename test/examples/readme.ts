/** The README as a test reads it: its sections and their code blocks. */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../../dev/self-link";

export const README = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

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

/**
 * What a snippet of the README leans on without declaring: the names a reader brings from the text
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
 * A README snippet as a module the TypeScript compiler can check: its imports on top, the context it
 * uses but does not declare, and its statements in an async function (snippets are pieces of a program's
 * body, and some await); `export` is dropped from statements that land in the function.
 */
export function snippetModule(block: string): string {
  const lines = block.split("\n");
  const imports = lines.filter((line) => /^import /.test(line));
  const body = lines.filter((line) => !/^import /.test(line)).map((line) => line.replace(/^export /, ""));
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
    "export async function readmeSnippet(): Promise<void> {",
    ...constsOfContext.map((text) => `  ${text}`),
    ...body.map((line) => (line ? `  ${line}` : line)),
    "}",
    "",
  ].join("\n");
}
