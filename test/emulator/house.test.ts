/**
 * The emulator's house rules, read from its files (no emulator runs): every file opens with a header
 * saying what its room holds, imports point down the layers (docs/architecture.md#dependencies-run-one-way),
 * and no files import each other in a loop.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";

const EMULATOR = path.resolve(__dirname, "..", "..", "emulator");

/** No import points from a lower layer to a higher one (the issue allowed one; the house reached none, and keeps it). */
const MAX_UPWARD_IMPORTS = 0;

/**
 * The layers, lowest first: core (what every room shares), the API areas, the faces that reach the
 * areas besides the API (the web console, the services gateway), and the top that puts them together
 * (server, CLI, the package entry). A new folder is an API area unless named here.
 */
const LAYERS = ["core", "API area", "face", "top"] as const;
type Layer = (typeof LAYERS)[number];
const FACES = new Set(["console", "services"]);

function layerOf(file: string): Layer {
  const parts = file.split("/");
  if (parts.length === 1) return "top";
  if (parts[0] === "core") return "core";
  return FACES.has(parts[0]) ? "face" : "API area";
}

/** Every TypeScript file of emulator/, relative to it, with `/` separators. */
function emulatorFiles(dir = EMULATOR): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return emulatorFiles(full);
    return entry.name.endsWith(".ts") ? [path.relative(EMULATOR, full).split(path.sep).join("/")] : [];
  });
}

/** The emulator files `file` imports or re-exports from, type-only imports included: a reader follows those too. */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const text = fs.readFileSync(path.join(EMULATOR, file), "utf8");
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const targets = importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => {
      const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), name));
      const resolved = [`${base}.ts`, `${base}/index.ts`].find((candidate) => known.has(candidate));
      if (resolved === undefined) throw new Error(`${file} imports ${name}, which is no file of emulator/`);
      return resolved;
    });
  return [...new Set(targets)];
}

/**
 * A file's header: a block comment before anything else, standing apart from what follows (a blank
 * line or an import after it), so that it is not the doc comment of the file's first declaration.
 */
function headerOf(text: string): string | undefined {
  const match =
    /^(?:#!.*\n)?\/\*\*([\s\S]*?)\*\/\n(\n|import |export \{[^}]*\} from |export type \{[^}]*\} from )/.exec(
      text,
    );
  return match?.[1].replace(/^\s*\*\s?/gm, " ").trim();
}

const FILES = emulatorFiles();
const KNOWN = new Set(FILES);
const IMPORTS = new Map(FILES.map((file) => [file, importsOf(file, KNOWN)]));

describe("the emulator's house", () => {
  it("finds the emulator's files and its imports", () => {
    expect(FILES).toContain("core/room.ts");
    expect(IMPORTS.get("server.ts")).toContain("core/room.ts");
  });

  it("opens every file with a header saying what it holds", () => {
    const headless = FILES.filter((file) => {
      const header = headerOf(fs.readFileSync(path.join(EMULATOR, file), "utf8"));
      return header === undefined || header.split(/\s+/).length < 5;
    });
    expect(headless).toEqual([]);
  });

  it(`imports from a lower layer to a higher one at most ${MAX_UPWARD_IMPORTS} time(s)`, () => {
    const upward = [...IMPORTS].flatMap(([file, targets]) =>
      targets
        .filter((target) => LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(file)))
        .map((target) => `${file} (${layerOf(file)}) -> ${target} (${layerOf(target)})`),
    );
    expect(upward.length <= MAX_UPWARD_IMPORTS ? [] : upward).toEqual([]);
  });

  it("has no files that import each other, directly or in a loop", () => {
    const loops: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        loops.push([...trail.slice(trail.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const target of IMPORTS.get(file) ?? []) visit(target, [...trail, file]);
      state.set(file, "done");
    };
    FILES.forEach((file) => visit(file, []));
    expect(loops).toEqual([]);
  });
});
