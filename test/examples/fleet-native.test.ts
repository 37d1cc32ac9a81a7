/**
 * The fleet example through `nativeFrontDoor()`: the same TypeScript program, its resources served by
 * the package's own native plugin (`pulumi-resource-gpucloud`) under the package's tokens, as a Pulumi
 * YAML, Python, Go or .NET program's would be.
 */
import { isSecret, nativeFrontDoor } from "../../testing";
import { API_KEY, openExample, plan, type ExampleRun } from "./helpers";

describe("examples/fleet through the native plugin", () => {
  let run: ExampleRun;
  beforeAll(async () => {
    // At 60x an idle window of 120 minutes lasts two real minutes: longer than this test, even on a busy machine.
    const config = { "fleet:count": "2", "fleet:idleMinutes": "120" };
    run = await openExample("fleet", config, { frontDoor: nativeFrontDoor() });
  });
  afterAll(() => run.close());

  it("comes up under gpucloud:index tokens with no provider code in the state, repairs drift, and is destroyed", async () => {
    const { stack, api } = run;
    const all = (op: string) => ({ "fleet-0": op, "fleet-1": op, "fleet-0-idle": op, "fleet-1-idle": op });

    expect(plan(await stack.preview())).toEqual(all("create"));
    const up = await stack.up();
    expect(plan(up)).toEqual(all("create"));
    expect(isSecret(up.outputs.sshEndpoints)).toBe(true);
    const types = stack.current.resources.map((r) => r.type).sort();
    expect(types).toEqual([
      "gpucloud:index:IdleClosePolicy",
      "gpucloud:index:IdleClosePolicy",
      "gpucloud:index:Instance",
      "gpucloud:index:Instance",
    ]);
    expect(stack.current.resources.map((r) => r.provider)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(JSON.stringify(stack.current)).not.toContain("__provider");
    expect(JSON.stringify(stack.current)).not.toContain(API_KEY);
    const instances = stack.current.resources.filter((r) => r.type === "gpucloud:index:Instance");
    expect(instances.map((r) => r.secretOutputs)).toEqual([["sshPasswords"], ["sshPasswords"]]);

    expect(plan(await stack.refresh())).toEqual(all("same"));

    const gone = instances.find((r) => r.name === "fleet-1")!.id;
    await api.instances.destroy(gone);
    const repairPlan = { ...all("same"), "fleet-1": "create", "fleet-1-idle": "create" };
    expect(plan(await stack.preview({ refresh: true }))).toEqual(repairPlan);
    expect(plan(await stack.up({ refresh: true }))).toEqual(repairPlan);
    expect((await api.instances.list()).instance_list.map((i) => i.title).sort()).toEqual([
      "fleet-0",
      "fleet-1",
    ]);

    expect(plan(await stack.destroy())).toEqual(all("delete"));
    expect((await api.instances.list()).total).toBe(0);
  });
});
