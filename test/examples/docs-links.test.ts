/**
 * The README and the pages of docs/ hold together: every relative link names a file or folder of the
 * repository (or a reference page generated from the package schema), every `#anchor` a heading of its
 * page, and every page is reached from the README by links, so a reader who starts there finds it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../../dev/self-link";
import { docFiles, headingAnchor, headings, isContributorPage, readDoc, relativeLinks } from "./docs";

interface Schema {
  resources: Record<string, unknown>;
  functions: Record<string, unknown>;
}

/** `gpucloud:index:IdleClosePolicy` -> `idle-close-policy`. */
function kebab(token: string): string {
  return token
    .split(":")
    .at(-1)!
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase();
}

/** The reference pages generated from the schema: one per resource and one per function. */
function referencePages(): string[] {
  const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "schema.json"), "utf8")) as Schema;
  return [
    ...Object.keys(schema.resources).map((t) => `docs/resources/${kebab(t)}.md`),
    ...Object.keys(schema.functions).map((t) => `docs/data-sources/${kebab(t)}.md`),
  ];
}

/** The anchors of a page's headings, numbered as GitHub numbers repeats (`-1`, `-2`). */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  return new Set(
    headings(readDoc(file)).map((heading) => {
      const anchor = headingAnchor(heading);
      const count = seen.get(anchor) ?? 0;
      seen.set(anchor, count + 1);
      return count === 0 ? anchor : `${anchor}-${count}`;
    }),
  );
}

/** Each link of `file` as the repository path it names (the file itself for `#anchor`) and its anchor. */
function linksOf(file: string): { target: string; anchor?: string; written: string }[] {
  return relativeLinks(file).map((written) => {
    const [place, anchor] = written.split("#");
    const target =
      place === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), place));
    return { target: target.replace(/\/$/, ""), anchor, written };
  });
}

describe("the links of the README and docs/", () => {
  const pages = docFiles();
  const generated = new Set(referencePages());

  it("name files or folders of the repository, or the reference pages the schema generates", () => {
    const broken = pages.flatMap((file) =>
      linksOf(file)
        .filter(({ target }) => !isContributorPage(target))
        .filter(({ target }) => !fs.existsSync(path.join(REPO_ROOT, target)) && !generated.has(target))
        .map(({ written }) => `${file}: ${written}`),
    );
    expect(broken).toEqual([]);
  });

  it("link each resource and data source of the schema from the index pages", () => {
    const linked = new Set(
      ["docs/resources.md", "docs/data-sources.md"].flatMap((f) => linksOf(f).map((l) => l.target)),
    );
    expect([...generated].filter((page) => !linked.has(page))).toEqual([]);
  });

  it("point each #anchor at a heading of its page", () => {
    const broken = pages.flatMap((file) =>
      linksOf(file)
        .filter(({ anchor, target }) => anchor !== undefined && fs.existsSync(path.join(REPO_ROOT, target)))
        .filter(({ anchor, target }) => !anchorsOf(target).has(anchor!))
        .map(({ written }) => `${file}: ${written}`),
    );
    expect(broken).toEqual([]);
  });

  it("reach every page from the README", () => {
    const reached = new Set(["README.md"]);
    const queue = ["README.md"];
    while (queue.length > 0) {
      for (const { target } of linksOf(queue.shift()!)) {
        if (target.endsWith(".md") && !reached.has(target) && pages.includes(target)) {
          reached.add(target);
          queue.push(target);
        }
      }
    }
    expect(pages.filter((page) => !reached.has(page))).toEqual([]);
  });

  it("finds what is broken (the checks themselves work)", () => {
    expect(headingAnchor("Finding instances no stack knows (`gpucloud-orphans`)")).toBe(
      "finding-instances-no-stack-knows-gpucloud-orphans",
    );
    expect(anchorsOf("docs/sdk.md").has("an-instances-whole-life")).toBe(true);
    expect(anchorsOf("docs/sdk.md").has("a-heading-it-lacks")).toBe(false);
    expect(kebab("gpucloud:index:getMarketImages")).toBe("get-market-images");
    expect(generated.has("docs/data-sources/get-gpu.md")).toBe(true);
  });
});
