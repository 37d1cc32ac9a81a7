/**
 * The seed loader: what an emulator serves that is not state (catalogue, published workflows, video
 * models, ...) and reset goes back to. Each API area declares its part of a `--seed FILE` beside its
 * built-in seed (a SeedPart); the server hands the parts to `loadSeed`, which reads the file once for all
 * of them and knows none of them.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseState, StateProblem } from "./schema";

/** The top-level lists one part reads from a seed file, each with the schema of the whole list. */
export type SeedLists = Record<string, z.ZodType>;

/** The lists a seed file holds for one part, as parsed; a list the file leaves out is absent. */
export type ListsInFile<Lists extends SeedLists> = { [Key in keyof Lists]?: z.infer<Lists[Key]> };

/**
 * One area's part of the seed (docs/design/contracts.md#more-options-and-faults): the lists it reads, in
 * the API's own field names, and what it serves from them. A list the file leaves out keeps the area's
 * built-in one; without a file every list is left out.
 */
export interface SeedPart<Lists extends SeedLists = SeedLists, Seeded = unknown> {
  readonly lists: Lists;
  seeded(inFile: ListsInFile<Lists>): Seeded;
}

/** A part whose `seeded` is typed by its lists. */
export function seedPart<Lists extends SeedLists, Seeded>(
  lists: Lists,
  seeded: (inFile: ListsInFile<Lists>) => Seeded,
): SeedPart<Lists, Seeded> {
  return { lists, seeded };
}

/** What the parts serve, read from one seed file or built in. */
export interface Seed {
  of<Seeded>(part: SeedPart<SeedLists, Seeded>): Seeded;
}

/** A seed file the emulator cannot start from; the message names the file, the entry and the field. */
export class SeedFileError extends Error {
  constructor(path: string, problem: string) {
    super(`seed file ${path} ${problem}`);
    this.name = "SeedFileError";
  }
}

/** The seed of `parts`: from the file at `path`, or built in when there is none. */
export function loadSeed(parts: readonly SeedPart[], path?: string): Seed {
  // Built without a file too, so that two parts claiming one list fail every start, not only a seeded one.
  const schema = seedFileSchema(parts);
  const inFile = path === undefined ? {} : readSeedFile(path, schema);
  return {
    of(part) {
      if (!parts.includes(part)) {
        throw new Error(`the seed was loaded without the part of ${Object.keys(part.lists).join(", ")}`);
      }
      const own = Object.keys(part.lists).filter((key) => Object.hasOwn(inFile, key));
      // No prototype: a part's `inFile.constructor ?? builtIn` must not find Object's own.
      const lists: Record<string, unknown> = Object.create(null);
      for (const key of own) lists[key] = inFile[key];
      return part.seeded(lists);
    },
  };
}

/**
 * Every part's lists, each optional. Unknown top-level keys are refused, so a typo is not a silently
 * ignored list; two parts reading one list would each think they own it, so that is refused at start.
 */
function seedFileSchema(parts: readonly SeedPart[]) {
  const lists: SeedLists = {};
  for (const part of parts) {
    for (const [key, schema] of Object.entries(part.lists)) {
      if (Object.hasOwn(lists, key))
        throw new Error(`two seed parts read the list ${key}: give each its own`);
      lists[key] = schema;
    }
  }
  return z.object(lists).partial().strict();
}

function readSeedFile(path: string, schema: z.ZodType<Record<string, unknown>>): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SeedFileError(
      path,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SeedFileError(path, "is not valid JSON");
  }
  try {
    return parseState(schema, json);
  } catch (problem) {
    if (problem instanceof StateProblem) throw new SeedFileError(path, `is refused: ${problem.message}`);
    throw problem;
  }
}
