import {
  CheckFailedError,
  displayValue,
  isSecret,
  OperationError,
  secret,
  Stack,
  UNKNOWN,
} from "../../testing";
import { notesConfig, notesWorld, plan, type NotesWorld } from "./notes-world";

describe("the engine (preview, up, refresh, destroy) on a fixture program", () => {
  let world: NotesWorld;
  let stack: Stack;

  beforeAll(async () => {
    world = notesWorld();
    stack = await world.open(["a", "b"]);
  });
  afterAll(async () => {
    await stack.close();
    world.remove();
  });

  it("previews creates without touching the state, outputs not yet known left unknown", async () => {
    const preview = await stack.preview();
    expect(plan(preview)).toEqual(["note-0 create", "note-1 create", "quote create"]);
    expect(preview.outputs).toMatchObject({ texts: ["a", "b"], greeting: UNKNOWN, quote: '"a"' });
    expect(stack.current.resources).toEqual([]);
  });

  it("creates, keeps additionalSecretOutputs secret, and records dependencies", async () => {
    const up = await stack.up();
    expect(plan(up)).toEqual(["note-0 create", "note-1 create", "quote create"]);
    expect(isSecret(up.outputs.greeting)).toBe(true);
    expect(stack.current.secretOutputs).toEqual(["greeting"]);
    const byName = Object.fromEntries(stack.current.resources.map((r) => [r.name, r]));
    expect(byName["note-0"]).toMatchObject({
      secretOutputs: ["greeting"],
      outputs: { greeting: secret("hello") },
    });
    expect(byName.quote.dependencies).toEqual([byName["note-0"].urn]);
    // stack.current is safe to print and a copy: displayValue hides the secrets, changing it changes nothing.
    expect(stack.current.outputs.greeting).toEqual(secret("hello"));
    expect(JSON.stringify(displayValue(stack.current))).not.toContain("hello");
    stack.current.resources.length = 0;
    expect(stack.current.resources).toHaveLength(3);
  });

  it("updates in place, replaces create-before-delete, and deletes what the program dropped", async () => {
    await stack.setConfig(notesConfig(["a", "c"]));
    expect(plan(await stack.up())).toEqual(["note-0 same", "note-1 update text", "quote same"]);

    await stack.setConfig(notesConfig(["a"], "top"));
    expect(plan(await stack.preview())).toEqual(["note-0 replace shelf!", "note-1 delete", "quote same"]);
    const up = await stack.up();
    expect(plan(up)).toEqual(["note-0 delete", "note-0 replace shelf!", "note-1 delete", "quote same"]);
    // The replaced note-0 is deleted once its replacement exists: the delete steps come last.
    expect(up.steps.map((s) => s.op).slice(-2)).toEqual(["delete", "delete"]);
    expect(stack.current.resources.map((r) => r.name).sort()).toEqual(["note-0", "quote"]);
    expect(Object.keys(world.notes())).toHaveLength(2);
    expect(plan(await stack.refresh())).toEqual(["note-0 same", "quote same"]);
  });

  it("shows drift made behind its back in refresh and in preview --refresh, and repairs it with up", async () => {
    const [id] = Object.keys(world.notes()).filter((k) => world.notes()[k].text === "a");
    const fs = await import("node:fs");
    const file = `${world.dir}/notes.json`;
    const store = JSON.parse(fs.readFileSync(file, "utf8"));
    store.notes[id].text = "changed by hand";
    fs.writeFileSync(file, JSON.stringify(store));

    expect(plan(await stack.preview({ refresh: true }))).toEqual(["note-0 update text", "quote same"]);
    // preview --refresh stores nothing it read.
    expect(stack.current.resources.find((r) => r.name === "note-0")!.outputs.text).toBe("a");
    expect(plan(await stack.refresh())).toEqual(["note-0 update text", "quote same"]);
    expect(plan(await stack.up())).toEqual(["note-0 update text", "quote same"]);
    expect(world.notes()[id].text).toBe("a");
  });

  it("configures a fresh provider with the new config, as each run of the CLI does", async () => {
    await stack.setConfig({ ...notesConfig(["a", "b"], "top"), "fixture:greeting": secret("bonjour") });
    expect(plan(await stack.up())).toEqual(["note-0 same", "note-1 create", "quote same"]);
    expect(stack.current.resources.find((r) => r.name === "note-1")!.outputs.greeting).toEqual(
      secret("bonjour"),
    );
  });

  it("stops on a failed check with the provider's reason and keeps the state", async () => {
    const before = stack.current.resources;
    await stack.setConfig(notesConfig([42], "top"));
    const failure = stack.up();
    await expect(failure).rejects.toThrow(OperationError);
    await expect(failure).rejects.toThrow(
      "note-0 (fixture:Note) failed its check: text: text must be a string",
    );
    const [checkFailure] = ((await failure.catch((e: unknown) => e)) as OperationError).failures;
    expect(checkFailure).toBeInstanceOf(CheckFailedError);
    expect(checkFailure).toMatchObject({
      name: "CheckFailedError",
      resource: "note-0",
      failures: [{ property: "text", reason: expect.stringMatching(/^text must be a string/) }],
    });
    expect(stack.current.resources).toEqual(before);
  });

  it("destroys dependents first", async () => {
    const destroy = await stack.destroy();
    const [first, ...rest] = destroy.steps.map((s) => `${s.op} ${s.name}`);
    expect([first, rest.sort()]).toEqual(["delete quote", ["delete note-0", "delete note-1"]]);
    expect(stack.current.resources).toEqual([]);
    expect(world.notes()).toEqual({});
  });

  it("refuses operations once closed", async () => {
    const closing = await world.open(["a"]);
    await closing.close();
    await expect(closing.preview()).rejects.toThrow("The stack is closed: open it again to run operations.");
  });
});
