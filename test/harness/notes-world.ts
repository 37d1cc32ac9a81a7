/** Stacks of the notes fixture program (fixtures/notes-program.ts), each world with its own notes file. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { secret, Stack, type OperationResult, type StackOptions } from "../../testing";

export const NOTES_PROGRAM = path.join(__dirname, "fixtures", "notes-program.ts");

export function notesConfig(texts: unknown[], shelf?: string) {
  return {
    "notes:texts": JSON.stringify(texts),
    ...(shelf ? { "notes:shelf": shelf } : {}),
    "fixture:greeting": secret("hello"),
  };
}

/** Each step as "name op changed-properties" ("!" marks a property that forces replacement), sorted. */
export function plan(result: OperationResult): string[] {
  return result.steps
    .map((s) => [s.name, s.op, ...s.changes.map((c) => `${c.name}${c.replaces ? "!" : ""}`)].join(" "))
    .sort();
}

export interface NotesWorld {
  dir: string;
  /** The provider's notes, as the "cloud" holds them. */
  notes(): Record<string, { text: string; dry: boolean }>;
  open(texts: unknown[], options?: Partial<StackOptions>): Promise<Stack>;
  remove(): void;
}

export function notesWorld(): NotesWorld {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "notes-world-"));
  const storeFile = path.join(dir, "notes.json");
  return {
    dir,
    notes: () => (fs.existsSync(storeFile) ? JSON.parse(fs.readFileSync(storeFile, "utf8")).notes : {}),
    open: (texts, options = {}) =>
      Stack.open({
        program: NOTES_PROGRAM,
        project: "notes",
        stack: "test",
        config: notesConfig(texts),
        env: { ...process.env, NOTES_STORE_FILE: storeFile },
        ...options,
      }),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
