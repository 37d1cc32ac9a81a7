/**
 * One program, two front doors: the notes program through Pulumi's dynamic-provider server, and through a
 * native plugin of the package `fixture` (fixtures/native-notes-plugin.ts) that knows its resources as
 * `fixture:index:Note`, without `__provider`, configured from provider properties.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { REPO_ROOT } from "../../dev/self-link";
import { nativeFrontDoor, OperationError, secret, type Stack, type StackOptions } from "../../testing";
import { notesConfig, notesWorld, plan, type NotesWorld } from "./notes-world";

/** The plugin and the notes provider it serves, transpiled into `dir`; their packages come from the repository. */
function nativePlugin(dir: string): Partial<StackOptions> {
  for (const name of ["native-notes-plugin", "notes"]) {
    const source = fs.readFileSync(path.join(__dirname, "fixtures", `${name}.ts`), "utf8");
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    });
    fs.writeFileSync(path.join(dir, `${name}.js`), outputText);
  }
  return {
    frontDoor: nativeFrontDoor({
      package: "fixture",
      command: process.execPath,
      args: [path.join(dir, "native-notes-plugin.js")],
    }),
  };
}

/** preview, up, an update and a replacement, refresh, and destroy: each operation's plan. */
async function lifecycle(stack: Stack, afterUp: () => void = () => undefined): Promise<string[][]> {
  const plans = [plan(await stack.preview()), plan(await stack.up())];
  afterUp();
  await stack.setConfig(notesConfig(["a", "c"], "top"));
  plans.push(plan(await stack.up()), plan(await stack.refresh()), plan(await stack.destroy()));
  return plans;
}

const EXPECTED = [
  ["note-0 create", "note-1 create", "quote create"],
  ["note-0 create", "note-1 create", "quote create"],
  ["note-0 delete", "note-0 replace shelf!", "note-1 delete", "note-1 replace shelf! text", "quote same"],
  ["note-0 same", "note-1 same", "quote same"],
  ["note-0 delete", "note-1 delete", "quote delete"],
];

describe("the same program through either front door", () => {
  let world: NotesWorld;
  let native: Partial<StackOptions>;

  beforeAll(() => {
    world = notesWorld();
    native = nativePlugin(world.dir);
  });
  afterAll(() => world.remove());

  const env = () => ({
    ...process.env,
    NOTES_STORE_FILE: path.join(world.dir, "notes.json"),
    NODE_PATH: path.join(REPO_ROOT, "node_modules"),
  });

  it("through the dynamic-provider server", async () => {
    const stack = await world.open(["a", "b"], { env: env() });
    try {
      expect(await lifecycle(stack)).toEqual(EXPECTED);
    } finally {
      await stack.close();
    }
  });

  it("through a native plugin, under the package's own tokens, with no provider code in the state", async () => {
    const stack = await world.open(["a", "b"], { env: env(), ...native });
    try {
      const plans = await lifecycle(stack, () => {
        const note = stack.current.resources.find((r) => r.name === "note-0")!;
        expect(note.type).toBe("fixture:index:Note");
        expect(note.urn).toBe("urn:pulumi:test::notes::fixture:index:Note::note-0");
        expect(note.provider).toBeUndefined();
        // The greeting came from the provider properties, a secret the plugin accepted and marked secret.
        expect(note.outputs.greeting).toEqual(secret("hello"));
        expect(note.secretOutputs).toContain("greeting");
        const quote = stack.current.resources.find((r) => r.name === "quote")!;
        expect(quote.dependencies).toEqual([note.urn]);
      });
      expect(plans).toEqual(EXPECTED);
    } finally {
      await stack.close();
    }
  });

  it("keeps a resource the native plugin made but could not finish, with its init errors", async () => {
    const stack = await world.open(["wet ink"], { env: env(), ...native });
    try {
      await expect(stack.up()).rejects.toThrow(OperationError);
      const note = stack.current.resources.find((r) => r.name === "note-0")!;
      expect(note).toMatchObject({ type: "fixture:index:Note", initErrors: ["the ink is still wet"] });
      expect(plan(await stack.up())).toEqual(["note-0 update", "quote create"]);
      await stack.destroy();
    } finally {
      await stack.close();
    }
  });
});
