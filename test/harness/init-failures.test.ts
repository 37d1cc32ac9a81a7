/**
 * Resources the provider made but could not finish (Pulumi's ErrorResourceInitFailed), as the Pulumi engine
 * treats them: kept in the state with their id, outputs and init errors; the next up updates them even
 * without changes (or replaces them when the diff says so); refresh takes the id read returns, or drops
 * them when read finds nothing; destroy deletes them.
 */
import { OperationError, ResourceInitFailedError, Stack, StepError } from "../../testing";
import { failureOf } from "../support/operations";
import { notesConfig, notesWorld, plan, type NotesWorld } from "./notes-world";

describe("resources the provider made but could not finish", () => {
  let world: NotesWorld;
  let stack: Stack;
  const note = (name: string) => stack.current.resources.find((r) => r.name === name);

  beforeAll(async () => {
    world = notesWorld();
    stack = await world.open(["wet ink"]);
  });
  afterAll(async () => {
    await stack.close();
    world.remove();
  });

  it("fails the up, and keeps the resource with its id, outputs and init errors", async () => {
    const failure = await failureOf(stack.up());
    const [stepError] = failure.failures;
    expect(stepError).toBeInstanceOf(StepError);
    const cause = (stepError as StepError).cause as ResourceInitFailedError;
    expect(cause).toBeInstanceOf(ResourceInitFailedError);
    expect(cause).toMatchObject({ id: "note-1", reasons: ["the ink is still wet"] });
    expect(failure.message).toBe(
      "up failed: create of note-0 (fixture:Note) failed: the ink of note-1 is wet (the ink is still wet). " +
        "The provider made it (id note-1) but could not finish it: it stays in the state, and the next up " +
        "finishes or replaces it.",
    );
    expect(failure.steps.find((s) => s.name === "note-0")).toMatchObject({
      op: "create",
      id: "note-1",
      initErrors: ["the ink is still wet"],
    });
    expect(note("note-0")).toMatchObject({
      id: "note-1",
      outputs: { text: "wet ink", dry: false },
      initErrors: ["the ink is still wet"],
    });
    // The dependent quote was never made: the deployment stopped.
    expect(note("quote")).toBeUndefined();
  });

  it("plans an update without changes for it, and the next up finishes it", async () => {
    expect(plan(await stack.preview())).toEqual(["note-0 update", "quote create"]);
    const up = await stack.up();
    expect(plan(up)).toEqual(["note-0 update", "quote create"]);
    expect(note("note-0")).toMatchObject({ id: "note-1", outputs: { dry: true } });
    expect(note("note-0")!.initErrors).toBeUndefined();
    expect(plan(await stack.up())).toEqual(["note-0 same", "quote same"]);
  });

  it("keeps the id and the init errors of an update that could not finish; the next up finishes it", async () => {
    const id = note("note-0")!.id;
    await stack.setConfig(notesConfig(["wet paint"]));
    const failure = await failureOf(stack.up());
    expect(failure.steps.find((s) => s.name === "note-0")).toMatchObject({ op: "update", id });
    expect(note("note-0")).toMatchObject({ id, outputs: { text: "wet paint", dry: false } });
    expect(note("note-0")!.initErrors).toEqual(["the ink is still wet"]);
    expect(plan(await stack.up())).toEqual(["note-0 update", "quote update text"]);
    expect(note("note-0")).toMatchObject({ id, outputs: { dry: true } });
    expect(note("note-0")!.initErrors).toBeUndefined();
  });

  it("replaces an unfinished resource when the diff says so, deleting the old one", async () => {
    const replaced = (failure: OperationError) =>
      failure.steps.filter((s) => s.name === "note-0").map((s) => `${s.op} ${s.id}`);
    // A replacement that cannot be finished still supersedes the old note, which goes at the end.
    const finished = note("note-0")!.id;
    await stack.setConfig(notesConfig(["wet again"], "top"));
    const first = await failureOf(stack.up());
    const unfinished = note("note-0")!;
    expect(unfinished).toMatchObject({ outputs: { shelf: "top" }, initErrors: ["the ink is still wet"] });
    expect(replaced(first)).toEqual([`replace ${unfinished.id}`, `delete ${finished}`]);
    expect(world.notes()[finished]).toBeUndefined();

    await stack.setConfig(notesConfig(["wet again"], "bottom"));
    // The quote still quotes "wet paint": the failed up stopped before it.
    expect(plan(await stack.preview())).toEqual(["note-0 replace shelf!", "quote update text"]);
    const second = await failureOf(stack.up());
    const replacement = note("note-0")!;
    expect(replacement.id).not.toBe(unfinished.id);
    expect(replaced(second)).toEqual([`replace ${replacement.id}`, `delete ${unfinished.id}`]);
    expect(world.notes()[unfinished.id]).toBeUndefined();
  });

  it("deletes an unfinished resource on destroy", async () => {
    const unfinished = note("note-0")!;
    const destroy = await stack.destroy();
    expect(destroy.steps.map((s) => `${s.op} ${s.name}`)).toContain("delete note-0");
    expect(world.notes()[unfinished.id]).toBeUndefined();
    expect(stack.current.resources).toEqual([]);
  });

  it("on refresh, stores the id read returns for a create whose answer was lost", async () => {
    await stack.setConfig(notesConfig(["lost answer"]));
    await failureOf(stack.up());
    const pending = note("note-0")!;
    expect(pending).toMatchObject({ initErrors: ["the create's outcome is not known yet"] });
    expect(pending.id).toMatch(/^pending-\d+$/);
    const made = pending.id.replace("pending", "note");
    const refresh = await stack.refresh();
    expect(refresh.steps.find((s) => s.name === "note-0")).toMatchObject({ op: "update", id: made });
    expect(note("note-0")).toMatchObject({ id: made, outputs: { text: "lost answer" } });
    expect(note("note-0")!.initErrors).toBeUndefined();
    expect(plan(await stack.up())).toEqual(["note-0 same", "quote create"]);
    await stack.destroy();
    expect(world.notes()).toEqual({});
  });

  it("on refresh, drops a resource whose read finds nothing behind its id", async () => {
    await stack.setConfig(notesConfig(["vanished answer"]));
    await failureOf(stack.up());
    expect(note("note-0")!.id).toMatch(/^pending-\d+$/);
    const refresh = await stack.refresh();
    expect(plan(refresh)).toEqual(["note-0 delete"]);
    expect(stack.current.resources).toEqual([]);
    expect(plan(await stack.preview())).toEqual(["note-0 create", "quote create"]);
  });
});
