/**
 * What users read never cites a file they do not have, nor a document the repository no longer has
 * (docs/design/ took their place). Scanned: the README and the pages of docs/ users read (docs/ ships in
 * the package, so their links resolve where it is installed), every string literal of the shipped
 * JavaScript (messages, outputs such as a price estimate's basis), and every doc comment of the shipped
 * declarations a program can reach through the package's entry points (editor hovers). Messages and
 * hovers name no docs/ path at all: they must say what they mean where they are read. Code comments may
 * cite docs/design/: they are not emitted into what ships, and test/docs/citations.test.ts checks that
 * what they cite exists.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ts from "typescript";
import { docFiles, readDoc } from "../examples/docs";
import { assertBuilt, REPO_ROOT } from "../harness";

/** The documents that lived beside the repository before docs/design/ took their place. */
const REPLACED_DOCUMENT = /field-notes\.md|api-v2\.md|DESIGN\.md|DESIGN ?§|STYLE\.md|CONTRACTS\.md/;
/** A replaced document, or a path under docs/ (not part of a longer path or of a URL). */
const CITATION = new RegExp(`${REPLACED_DOCUMENT.source}|(?<![\\w/.:-])docs/`);

interface Manifest {
  files: string[];
  exports: Record<string, string | { types?: string }>;
}

const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as Manifest;

/** Every file the package ships, as npm packs it (package.json `files`, its exclusions applied). */
function shipped(): string[] {
  const stdout = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  const [{ files }] = JSON.parse(stdout) as { files: { path: string }[] }[];
  return files.map((f) => path.join(REPO_ROOT, f.path));
}

/** The declaration files of the entry points (package.json `exports`), wildcards expanded. */
function entryDeclarations(): string[] {
  return Object.values(manifest.exports).flatMap((target) => {
    const types = typeof target === "object" ? target.types : undefined;
    if (types === undefined) return [];
    const full = path.join(REPO_ROOT, types);
    if (!types.includes("*")) return [full];
    const [dir, suffix] = [path.dirname(full), path.basename(full).replace("*", "")];
    return fs.readdirSync(dir).flatMap((f) => (f.endsWith(suffix) ? [path.join(dir, f)] : []));
  });
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line + 1;
}

/** `file:line: text` of each string literal (or template part) that cites a file. */
function citingStrings(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) &&
      CITATION.test((node as ts.LiteralLikeNode).text)
    ) {
      found.push(`${path.relative(REPO_ROOT, file)}:${lineOf(source, node.getStart())}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `file:line: text` of each line of a reachable declaration file that cites a file. */
function citingDeclarationLines(): string[] {
  const program = ts.createProgram(entryDeclarations(), { noEmit: true, types: [] });
  const dist = path.join(REPO_ROOT, "dist") + path.sep;
  return program
    .getSourceFiles()
    .filter((source) => path.resolve(source.fileName).startsWith(dist))
    .flatMap((source) =>
      source.text
        .split("\n")
        .flatMap((text, index) =>
          CITATION.test(text)
            ? [`${path.relative(REPO_ROOT, source.fileName)}:${index + 1}: ${text.trim()}`]
            : [],
        ),
    );
}

describe("user-facing text cites no file outside the package", () => {
  beforeAll(() => assertBuilt());

  it("the README and the user documentation in docs/", () => {
    const pages = docFiles();
    expect(pages.length).toBeGreaterThan(10);
    const citing = pages.flatMap((file) =>
      readDoc(file)
        .split("\n")
        .flatMap((text, i) => (REPLACED_DOCUMENT.test(text) ? [`${file}:${i + 1}: ${text}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it("the string literals of the shipped JavaScript", () => {
    const scripts = shipped().filter((f) => f.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(50);
    expect(scripts.flatMap(citingStrings)).toEqual([]);
  });

  it("the doc comments of the declarations the entry points reach", () => {
    expect(entryDeclarations().length).toBeGreaterThanOrEqual(4);
    expect(citingDeclarationLines()).toEqual([]);
  });

  it("finds a citation where there is one (the scanner itself works)", () => {
    const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "citations-")), "probe.js");
    // Spelt out at run time, so that this file cites nothing itself.
    const design = ["docs", "design", "cloud-api"].join("/");
    const [api, notes, page] = ["api-v2", "field-notes", design].map((name) => `${name}.md`);
    try {
      fs.writeFileSync(
        probe,
        `throw new Error(\`see \${"${api}"} and ${notes}\`);\nconst next = "read ${page}#errors";\n` +
          'const url = "https://example.com/docs/page";\n',
      );
      expect(citingStrings(probe)).toHaveLength(3);
    } finally {
      fs.rmSync(path.dirname(probe), { recursive: true, force: true });
    }
  });
});
