/**
 * The lost-create recovery has one door: nothing outside provider/resources/instance/lost-create/ imports
 * any of its files but index.ts, and nothing it imports from outside reaches back into it (it imports
 * nothing above it). Reads the sources only.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "../../dev/self-link";

const ROOM = path.join(REPO_ROOT, "provider", "resources", "instance", "lost-create");
const DOOR = path.join(ROOM, "index.ts");
const SCANNED = ["provider", "testing", "test", "bench", "dev", "demo", "examples"];

function sourcesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourcesUnder(full);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** The repository files `file` imports (relative imports only), as absolute paths of .ts files. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => path.resolve(path.dirname(file), name))
    .map((target) => (fs.existsSync(`${target}.ts`) ? `${target}.ts` : path.join(target, "index.ts")))
    .filter((target) => fs.existsSync(target));
}

const inRoom = (file: string) => file.startsWith(`${ROOM}${path.sep}`);
const relative = (file: string) => path.relative(REPO_ROOT, file);
const SOURCES = SCANNED.flatMap((dir) => sourcesUnder(path.join(REPO_ROOT, dir)));

describe("the lost-create recovery's door", () => {
  it("is the only file of lost-create/ that anything outside it imports", () => {
    const pastTheDoor = SOURCES.filter((file) => !inRoom(file)).flatMap((file) =>
      importsOf(file)
        .filter((target) => inRoom(target) && target !== DOOR)
        .map((target) => `${relative(file)} imports ${relative(target)}`),
    );
    expect(pastTheDoor).toEqual([]);
  });

  it("imports nothing that imports it back (nothing above it)", () => {
    const graph = new Map(SOURCES.map((file) => [file, importsOf(file)]));
    const reachesRoom = (start: string): boolean => {
      const seen = new Set<string>();
      const stack = [start];
      while (stack.length > 0) {
        const file = stack.pop()!;
        if (inRoom(file)) return true;
        if (seen.has(file)) continue;
        seen.add(file);
        stack.push(...(graph.get(file) ?? importsOf(file)));
      }
      return false;
    };
    const upward = SOURCES.filter(inRoom).flatMap((file) =>
      importsOf(file)
        .filter((target) => !inRoom(target) && reachesRoom(target))
        .map((target) => `${relative(file)} imports ${relative(target)}, which imports lost-create/`),
    );
    expect(upward).toEqual([]);
  });

  it("finds the imports it checks (the check reads what it means to)", () => {
    const create = path.join(REPO_ROOT, "provider", "resources", "instance", "create.ts");
    expect(importsOf(create)).toContain(DOOR);
    expect(SOURCES.filter(inRoom).length).toBeGreaterThan(10);
  });
});
