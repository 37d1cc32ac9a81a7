/**
 * Every citation of a document resolves inside the repository, so a contributor with only the clone can
 * follow each one: a markdown link or a path naming a markdown file or something under docs/, in any
 * source, test or markdown file git knows (tracked, or new and not ignored). The file must exist, and so
 * must the heading an anchor names, by GitHub's rule. The documents that once lived beside the
 * repository, and were moved into docs/design/, are cited by their new names only.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { anchorsOf, citationsIn, headingAnchor, problemOf, type Citation } from "./references";

const ROOT = path.resolve(__dirname, "..", "..");

const SCANNED = /\.(?:[cm]?[jt]s|md|json|ya?ml)$/;
/** Written by npm, not by us. */
const NOT_SCANNED = new Set(["package-lock.json"]);

/**
 * The old ways of citing the documents docs/design/ replaced: by their file names, by section sign, or
 * as the word spec before a quoted heading.
 */
const REPLACED_CITATION =
  /DESIGN\.md|DESIGN ?§|api-v2\.md|field-notes\.md|STYLE\.md|CONTRACTS\.md|\bfield notes\b|\bspec ["][A-Z/]/;

/** The files to scan, relative to `root`: what git tracks or would track, and still exists. */
function scannedFiles(root: string): string[] {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  });
  return [...new Set(listed.split("\0"))].filter(
    (file) =>
      SCANNED.test(file) && !NOT_SCANNED.has(path.basename(file)) && fs.existsSync(path.join(root, file)),
  );
}

/** The anchors of each markdown file, read once. */
function anchorCache(root: string): (file: string) => Set<string> {
  const cache = new Map<string, Set<string>>();
  return (file) => {
    let anchors = cache.get(file);
    if (!anchors) {
      anchors = anchorsOf(fs.readFileSync(path.join(root, file), "utf8"));
      cache.set(file, anchors);
    }
    return anchors;
  };
}

function problemsIn(root: string, citations: readonly Citation[]): string[] {
  const anchors = anchorCache(root);
  return citations.flatMap((citation) => problemOf(root, citation, anchors) ?? []);
}

describe("citations of documents", () => {
  const files = scannedFiles(ROOT);
  const citations = files.flatMap((file) => citationsIn(ROOT, file));

  it("scans the sources, tests and markdown of the repository", () => {
    for (const folder of ["provider/", "sdk/", "emulator/", "test/", "docs/design/"]) {
      expect(files.some((file) => file.startsWith(folder))).toBe(true);
    }
    expect(files).toEqual(expect.arrayContaining(["README.md", "jest.config.js", "eslint.config.mjs"]));
  });

  it("name only files the repository holds, and headings those files have", () => {
    expect(citations.filter((c) => c.target?.startsWith("docs/design/")).length).toBeGreaterThan(100);
    expect(problemsIn(ROOT, citations)).toEqual([]);
  });

  it("never name the documents docs/design/ replaced", () => {
    const leftovers = files.flatMap((file) =>
      fs
        .readFileSync(path.join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((text, i) => (REPLACED_CITATION.test(text) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
    );
    expect(leftovers).toEqual([]);
  });
});

describe("the citation scanner", () => {
  it("makes anchors as GitHub does", () => {
    expect(headingAnchor("`Instance` (id: the instance uuid)")).toBe("instance-id-the-instance-uuid");
    expect(headingAnchor("What the spec leaves unknown, and what the provider does")).toBe(
      "what-the-spec-leaves-unknown-and-what-the-provider-does",
    );
    expect(headingAnchor("Failures of update_title")).toBe("failures-of-update_title");
    expect(headingAnchor("The emulator: routes, stores and the clock")).toBe(
      "the-emulator-routes-stores-and-the-clock",
    );
    expect(headingAnchor("See [the API](#the-api) — v2")).toBe("see-the-api--v2");
  });

  it("numbers repeated headings and ignores fenced code", () => {
    const anchors = anchorsOf(
      '# Notes\n## Limits\n```sh\n# not a heading\n```\n## Limits\n<a id="here"></a>\n',
    );
    expect([...anchors]).toEqual(["notes", "limits", "limits-1", "here"]);
  });

  describe("in a repository of its own", () => {
    let root: string;
    // Names spelt out at run time, so that this file cites nothing itself.
    const md = (name: string) => `${name}.md`;
    const png = (name: string) => `${name}.png`;
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
    };
    const problems = (file: string) => problemsIn(root, citationsIn(root, file));

    beforeAll(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), "citations-"));
      write(`docs/${md("guide")}`, "# Guide\n## Paging\n");
      write(`docs/${png("picture")}`, "");
    });
    afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

    it("resolves a path in a comment from the root, and checks its anchor", () => {
      write(
        "src/code.ts",
        `// docs/${md("guide")}#paging holds.\n// docs/${md("guide")}#nowhere does not.\n` +
          `// docs/${md("gone")} is gone, and so is docs/${png("gone")}.\n// https://example.com/docs/${md("x")} is a URL.\n`,
      );
      expect(problems("src/code.ts")).toEqual([
        `src/code.ts:2: docs/${md("guide")}#nowhere: docs/${md("guide")} has no heading #nowhere`,
        `src/code.ts:3: docs/${md("gone")}: no such file in the repository`,
        `src/code.ts:3: docs/${png("gone")}: no such file in the repository`,
      ]);
    });

    it("resolves a markdown link from the linking file's folder, and an anchor of its own", () => {
      write(
        `docs/${md("index")}`,
        `# Index\n[ok](${md("guide")}#paging) [root](/docs/${md("guide")}) ![pic](${png("picture")}) [self](#index)\n` +
          `[bad](${md("guide")}#limits) [up](../${md("missing")}) [here](#nothing) [web](https://example.com/a.md)\n` +
          "```\n[fenced](nowhere.txt)\n```\n",
      );
      expect(problems(`docs/${md("index")}`)).toEqual([
        `docs/${md("index")}:3: ${md("guide")}#limits: docs/${md("guide")} has no heading #limits`,
        `docs/${md("index")}:3: ../${md("missing")}: no such file in the repository`,
        `docs/${md("index")}:3: #nothing: docs/${md("index")} has no heading #nothing`,
      ]);
    });
  });
});
