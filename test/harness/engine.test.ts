import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { isSecret, OperationError, secret, Stack, UNKNOWN, type OperationResult } from "../../engine";

const PROGRAM = path.join(__dirname, "fixtures", "notes-program.ts");

function config(texts: unknown[], shelf?: string) {
  return {
    "notes:texts": JSON.stringify(texts),
    ...(shelf ? { "notes:shelf": shelf } : {}),
    "fixture:greeting": secret("hello"),
  };
}

/** Each step as "name op changed-properties" ("!" marks a property that forces replacement), sorted. */
function plan(result: OperationResult): string[] {
  return result.steps
    .map((s) => [s.name, s.op, ...s.changes.map((c) => `${c.name}${c.replaces ? "!" : ""}`)].join(" "))
    .sort();
}

describe("the engine (preview, up, refresh, destroy) on a fixture program", () => {
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "engine-test-"));
    stack = await Stack.open({
      program: PROGRAM,
      project: "notes",
      stack: "test",
      config: config(["a", "b"]),
      stateFile: path.join(dir, "state.json"),
    });
  });
  afterAll(async () => {
    await stack.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("previews creates without touching the state, outputs not yet known left unknown", async () => {
    const preview = await stack.preview();
    expect(plan(preview)).toEqual(["note-0 create", "note-1 create", "quote create"]);
    expect(preview.outputs).toMatchObject({ texts: ["a", "b"], greeting: UNKNOWN, quote: '"a"' });
    expect(stack.current.resources).toEqual([]);
  });

  it("creates, keeps additionalSecretOutputs secret, and records dependencies in the state file", async () => {
    const up = await stack.up();
    expect(plan(up)).toEqual(["note-0 create", "note-1 create", "quote create"]);
    expect(isSecret(up.outputs.greeting)).toBe(true);
    const saved = JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
    expect(saved.secretOutputs).toEqual(["greeting"]);
    const byName = Object.fromEntries(saved.resources.map((r: { name: string }) => [r.name, r]));
    expect(byName["note-0"]).toMatchObject({ secretOutputs: ["greeting"], outputs: { greeting: "hello" } });
    expect(byName.quote.dependencies).toEqual([byName["note-0"].urn]);
  });

  it("updates in place, replaces create-before-delete, and deletes what the program dropped", async () => {
    await stack.setConfig(config(["a", "c"]));
    expect(plan(await stack.up())).toEqual(["note-0 same", "note-1 update text", "quote same"]);

    await stack.setConfig(config(["a"], "top"));
    expect(plan(await stack.preview())).toEqual(["note-0 replace shelf!", "note-1 delete", "quote same"]);
    const up = await stack.up();
    expect(plan(up)).toEqual(["note-0 delete", "note-0 replace shelf!", "note-1 delete", "quote same"]);
    // The replaced note-0 is deleted once its replacement exists: the delete steps come last.
    expect(up.steps.map((s) => s.op).slice(-2)).toEqual(["delete", "delete"]);
    expect(stack.current.resources.map((r) => r.name).sort()).toEqual(["note-0", "quote"]);
    expect(plan(await stack.refresh())).toEqual(["note-0 same", "quote same"]);
  });

  it("stops on a failed check with the provider's reason and keeps the state", async () => {
    const before = stack.current.resources;
    await stack.setConfig(config([42], "top"));
    const failure = stack.up();
    await expect(failure).rejects.toThrow(OperationError);
    await expect(failure).rejects.toThrow(
      "note-0 (fixture:Note) failed its check: text: text must be a string",
    );
    expect(stack.current.resources).toEqual(before);
  });

  it("destroys dependents first", async () => {
    const destroy = await stack.destroy();
    expect(destroy.steps.map((s) => `${s.op} ${s.name}`)).toEqual(["delete quote", "delete note-0"]);
    expect(stack.current.resources).toEqual([]);
  });
});
