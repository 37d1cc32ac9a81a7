/**
 * The package's entry points as the docs list them, against `package.json`: docs/design/contracts.md
 * lists every import (`exports`) and every executable (`bin`), and the README's "What is in the box"
 * names none that the package does not have. Only files are read: nothing is built or started.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../harness";
import { readDoc } from "../examples/docs";

const PACKAGE = "pulumi-gpucloud";
/** How the contract writes the name a `*` of a subpath pattern stands for. */
const PATTERN_NAME = "<kind>";
/** A name in prose that means an import of the package or one of its executables. */
const ENTRY_NAME = /^(pulumi-gpucloud(\/|$)|gpucloud-|pulumi-resource-)/;

interface Manifest {
  exports: Record<string, unknown>;
  bin: Record<string, string>;
}

const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as Manifest;

/** The import an `exports` key gives users: `.` is the package, `./sdk` is `pulumi-gpucloud/sdk`. */
function importOf(subpath: string): string {
  return path.posix.join(PACKAGE, subpath).replace("*", PATTERN_NAME);
}

/** The modules users import; `./package.json` is exported for tools, not as an entry point. */
function exportedImports(): string[] {
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map(importOf)
    .sort();
}

/** The lines of a markdown section, from its heading to the next heading of its level or above. */
function section(text: string, heading: string): string[] {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.indexOf(" ");
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(" ") <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The first cells of the rows of the table in `lines` whose header's first cell is `header`. */
function firstColumn(lines: string[], header: string): string[] {
  const start = lines.findIndex((line) => cells(line)[0] === header);
  if (start < 0) throw new Error(`no table whose first column is "${header}"`);
  const rows: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(cells(line)[0]);
  }
  return rows;
}

function cells(row: string): string[] {
  return row
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((cell) => cell.trim());
}

/** The names a cell sets in code: "`pulumi-gpucloud/policy`, `policy-pack/`" gives both. */
function codeNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** Each cell must be one name in code, nothing else, so that a row cannot hide a second name. */
function soleCodeName(cell: string): string {
  const names = codeNames(cell);
  if (names.length !== 1 || cell !== `\`${names[0]}\``) throw new Error(`"${cell}" is not one name in code`);
  return names[0];
}

describe("the entry points the docs list", () => {
  const contract = section(readDoc("docs/design/contracts.md"), "## Package and entry points");

  it("in docs/design/contracts.md are exactly the package's exports, ./package.json aside", () => {
    const listed = firstColumn(contract, "import").map(soleCodeName).sort();
    expect(listed).toEqual(exportedImports());
  });

  it("in docs/design/contracts.md are exactly the package's executables", () => {
    const listed = firstColumn(contract, "command").map(soleCodeName).sort();
    expect(listed).toEqual(Object.keys(manifest.bin).sort());
  });

  it("name in docs/design/contracts.md only resource kinds that pulumi-gpucloud/dynamic/<kind> serves", () => {
    const row = contract.find((line) => line.startsWith(`| \`${PACKAGE}/dynamic/${PATTERN_NAME}\``));
    const kinds = codeNames(cells(row ?? "")[1] ?? "");
    const generated = fs
      .readdirSync(path.join(REPO_ROOT, "provider", "generated", "dynamic"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.replace(/\.ts$/, ""))
      .sort();
    expect(kinds.sort()).toEqual(generated);
  });

  it("in the README's box are imports and executables the package has", () => {
    const box = firstColumn(section(readDoc("README.md"), "## What is in the box"), "part");
    const named = box.flatMap(codeNames).filter((name) => ENTRY_NAME.test(name));
    const known = new Set([...exportedImports(), ...Object.keys(manifest.bin)]);
    expect(named.filter((name) => !known.has(name))).toEqual([]);
    expect(named.length).toBeGreaterThan(0);
  });
});
