/** The state file keeps secrets sealed with the caller's passphrase, and refuses to open without it. */
import * as fs from "node:fs";
import * as path from "node:path";
import { isSecret, secret, Stack } from "../../testing";
import { notesConfig, notesWorld, type NotesWorld } from "./notes-world";

const PASSPHRASE = "correct horse battery staple";
const DIARY = "dear diary: the launch code is 0000";

describe("a stack's state file", () => {
  let world: NotesWorld;
  let stateFile: string;
  const config = { ...notesConfig(["a"]), "notes:diary": secret(DIARY) };

  beforeAll(() => {
    world = notesWorld();
    stateFile = path.join(world.dir, "state", "stack.json");
  });
  afterAll(() => world.remove());

  it("holds no secret value in plain text: secret outputs, secret inputs and secret stack outputs are sealed", async () => {
    const stack = await world.open([], { config, stateFile, passphrase: PASSPHRASE });
    try {
      const up = await stack.up();
      expect(isSecret(up.outputs.diary)).toBe(true);
      expect(stack.current.resources.find((r) => r.name === "diary")!.secretOutputs).toContain("text");
    } finally {
      await stack.close();
    }
    const text = fs.readFileSync(stateFile, "utf8");
    expect(["hello", DIARY, "launch code"].filter((plain) => text.includes(plain))).toEqual([]);
    expect(JSON.parse(text).secretsProvider.type).toBe("passphrase");
    expect(fs.statSync(stateFile).mode & 0o777).toBe(0o600);
  });

  it("reopens with the passphrase from PULUMI_CONFIG_PASSPHRASE and carries on from the saved state", async () => {
    const stack = await world.open([], {
      config,
      stateFile,
      env: {
        ...process.env,
        NOTES_STORE_FILE: path.join(world.dir, "notes.json"),
        PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
      },
    });
    try {
      const diary = stack.current.resources.find((r) => r.name === "diary")!;
      expect(diary.inputs.text).toEqual(secret(DIARY));
      expect(stack.current.outputs.diary).toEqual(secret(DIARY));
      const refresh = await stack.refresh();
      expect(refresh.steps.map((s) => `${s.name} ${s.op}`).sort()).toEqual([
        "diary same",
        "note-0 same",
        "quote same",
      ]);
      await stack.destroy();
      expect(world.notes()).toEqual({});
    } finally {
      await stack.close();
    }
  });

  it("refuses another passphrase, naming the file and the fix", async () => {
    await expect(world.open([], { config, stateFile, passphrase: "wrong" })).rejects.toThrow(
      `Could not open the state file ${stateFile}: the passphrase does not open its secrets. ` +
        "Give the passphrase the file was written with.",
    );
  });

  it("refuses a state file without a passphrase", async () => {
    const env = { ...process.env, PULUMI_CONFIG_PASSPHRASE: "" };
    await expect(
      Stack.open({ program: "unused.js", project: "p", stack: "s", stateFile, env }),
    ).rejects.toThrow(
      `Could not open the state file ${stateFile}: it needs a passphrase to seal its secrets. ` +
        "Give Stack.open a passphrase (or set PULUMI_CONFIG_PASSPHRASE), or leave out stateFile to keep the state in memory.",
    );
  });

  it("refuses a state file of another stack", async () => {
    await expect(
      Stack.open({ program: "unused.js", project: "other", stack: "s", stateFile, passphrase: PASSPHRASE }),
    ).rejects.toThrow(`it belongs to the stack notes/test, not other/s. Give this stack another state file.`);
  });
});
