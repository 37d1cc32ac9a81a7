import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Harness, secret, serializedProvider, UNKNOWN } from "./index";
import { Note } from "./fixtures/notes";

describe("the lifecycle harness", () => {
  let harness: Harness;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-test-"));
    const text = await serializedProvider(() => new Note("n", { text: "hello" }));
    harness = await Harness.start({
      providers: { Note: text },
      module: "fixture",
      config: { "fixture:greeting": secret("hi there") },
      env: { ...process.env, NOTES_STORE_FILE: path.join(dir, "notes.json") },
    });
  });
  afterAll(async () => {
    await harness.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reports check failures by property and fills check's defaults", async () => {
    expect(await harness.check("Note", { text: 42 })).toEqual({
      inputs: { text: 42, shelf: "default" },
      failures: [{ property: "text", reason: "text must be a string" }],
    });
  });

  it("passes preview unknowns through check as the engine's sentinel string", async () => {
    expect(await harness.checked("Note", { text: UNKNOWN })).toEqual({ text: UNKNOWN, shelf: "default" });
  });

  it("drives create, read, in-place update, replacement and delete end to end", async () => {
    const final = await harness.lifecycle({
      resource: "Note",
      preview: { text: "first" },
      create: { text: "first" },
      afterCreate: (state) => {
        // Configure's secret arrived unwrapped, as the engine delivers config to acceptSecrets=false servers.
        expect(state.outputs).toEqual({ text: "first", shelf: "default", greeting: "hi there", dry: true });
      },
      updates: [
        { inputs: { text: "second" }, expect: { changes: "some" } },
        { inputs: { text: "second" }, expect: { changes: "none" } },
        { inputs: { text: "second", shelf: "top" }, expect: { changes: "some", replaces: ["shelf"] } },
      ],
      keep: true,
    });
    expect(final.outputs).toMatchObject({ text: "second", shelf: "top" });
    await harness.delete("Note", final);
    expect((await harness.read("Note", final)).id).toBe("");
  });

  it("reports a failing step with the provider's message", async () => {
    await expect(
      harness.update("Note", { id: "note-404", inputs: {}, outputs: {} }, { text: "x" }),
    ).rejects.toThrow("note note-404 not found");
  });
});
