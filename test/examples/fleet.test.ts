import { isSecret } from "../../testing";
import { API_KEY, openExample, plan, type ExampleRun } from "./helpers";

describe("examples/fleet under pulumi-gpucloud/testing, its provider settings from the environment", () => {
  let run: ExampleRun;
  beforeAll(async () => {
    // At 60x an idle window of 120 minutes lasts two real minutes: longer than this test, even on a busy machine.
    const config = { "fleet:count": "2", "fleet:podTitle": "Ollama Open WebUI", "fleet:idleMinutes": "120" };
    run = await openExample("fleet", config, { settingsFrom: "environment" });
  });
  afterAll(() => run.close());

  // The settings are in Stack.open's `env` only, not in this process's environment: the provider process
  // and the program's data sources (which run in this process) both read them there, as under the CLI.
  // (up once failed with "base URL is not set" while preview worked; later the data sources did.)
  it("previews, comes up, shows no drift, makes again what was destroyed by hand, and is destroyed", async () => {
    const { stack, api } = run;
    expect(process.env.GPUCLOUD_BASE_URL).toBeUndefined();
    const all = (op: string) => ({
      "fleet-0": op,
      "fleet-1": op,
      "fleet-0-idle": op,
      "fleet-1-idle": op,
    });

    const preview = await stack.preview();
    expect(plan(preview)).toEqual(all("create"));
    expect(stack.current.resources).toEqual([]);

    const up = await stack.up();
    expect(plan(up)).toEqual(all("create"));
    expect(Object.keys(up.outputs.serviceUrls as object).sort()).toEqual(["fleet-0", "fleet-1"]);
    expect(up.outputs.hourlyPrice).toMatchObject({ currency: "CNY", fleet: expect.any(Number) });
    // SSH endpoints hold passwords: secret in the outputs and listed as secret in the state.
    expect(isSecret(up.outputs.sshEndpoints)).toBe(true);
    expect(stack.current.secretOutputs).toEqual(["sshEndpoints"]);
    const instances = stack.current.resources.filter((r) => r.type.endsWith(":Instance"));
    expect(instances.map((r) => r.secretOutputs)).toEqual([["sshPasswords"], ["sshPasswords"]]);
    // The fleet is usable when up returns: each instance waited for its web services.
    expect(instances.map((r) => r.inputs.waitForServices)).toEqual([true, true]);
    expect(JSON.stringify(stack.current)).not.toContain(API_KEY);
    const titles = (await api.instances.list()).instance_list.map((i) => i.title).sort();
    expect(titles).toEqual(["fleet-0", "fleet-1"]);

    expect(plan(await stack.refresh())).toEqual(all("same"));
    expect(plan(await stack.preview())).toEqual(all("same"));

    // An instance destroyed by hand: refresh drops it and its policy, up makes both again.
    const gone = stack.current.resources.find((r) => r.name === "fleet-1")!.id;
    await api.instances.destroy(gone);
    // preview --refresh plans the repair without storing what it read.
    const repairPlan = { ...all("same"), "fleet-1": "create", "fleet-1-idle": "create" };
    expect(plan(await stack.preview({ refresh: true }))).toEqual(repairPlan);
    expect(stack.current.resources.find((r) => r.name === "fleet-1")!.id).toBe(gone);
    expect(plan(await stack.refresh())).toEqual({
      ...all("same"),
      "fleet-1": "delete",
      "fleet-1-idle": "delete",
    });
    expect(plan(await stack.up())).toEqual(repairPlan);

    expect(plan(await stack.destroy())).toEqual(all("delete"));
    expect(stack.current.resources).toEqual([]);
    expect((await api.instances.list()).total).toBe(0);
  });

  it("names the stack setting to fix when a GPU count or idle period is not one the cloud takes", async () => {
    const { stack, api } = run;
    const config = { "fleet:count": "1", "fleet:podTitle": "Ollama Open WebUI" };
    await stack.setConfig({ ...config, "fleet:gpuCount": "3" });
    await expect(stack.preview()).rejects.toThrow("fleet:gpuCount is 3; it must be one of 1, 2, 4, 8.");
    await stack.setConfig({ ...config, "fleet:idleMinutes": "45" });
    await expect(stack.preview()).rejects.toThrow(
      "fleet:idleMinutes is 45; it must be one of 10, 30, 60, 120.",
    );
    expect((await api.instances.list()).total).toBe(0);
  });
});
