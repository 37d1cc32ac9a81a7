/**
 * examples/yaml-fleet, the Pulumi YAML program of the native plugin, against the package schema: every
 * resource type, property, function, argument and result it uses exists, with the right types. The
 * checker itself is shown to catch each kind of mistake, so a clean answer means something. Then the
 * program itself, run through the native plugin (whose Construct declares the Fleet's members), checked
 * by the cost guard policy pack.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { assertBuilt, ensurePackageLink } from "../../dev/self-link";
import type { PackageSchema } from "../../provider/codegen/package-schema";
import { costGuardPolicyPack, nativeFrontDoor, OperationError, secret, Stack } from "../../testing";
import { REPO_ROOT } from "../harness";
import { YamlProgramChecker } from "./yaml-program";

const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "schema.json"), "utf8")) as PackageSchema;
const example = () =>
  parse(fs.readFileSync(path.join(REPO_ROOT, "examples", "yaml-fleet", "Pulumi.yaml"), "utf8"));

const problems = (program: Record<string, unknown>) =>
  new YamlProgramChecker(schema, program as never).check();

describe("examples/yaml-fleet", () => {
  it("uses only what the schema declares, with the right types", () => {
    const program = example();
    expect(problems(program)).toEqual([]);
    // One resource however large the fleet: the plugin's Construct declares its members.
    expect(Object.values(program.resources).map((r) => (r as { type: string }).type)).toEqual([
      "gpucloud:index:Fleet",
    ]);
  });

  it("loads the plugin from the folder the npm package ships", () => {
    const [provider] = example().plugins.providers;
    expect(provider).toEqual({ name: "gpucloud", path: "./node_modules/pulumi-gpucloud/plugin" });
    // In a project, node_modules/pulumi-gpucloud is this package: its plugin folder is ./plugin here.
    const shipped = path.join(REPO_ROOT, provider.path.replace("./node_modules/pulumi-gpucloud/", ""));
    expect(fs.existsSync(path.join(shipped, "PulumiPlugin.yaml"))).toBe(true);
  });
});

describe("the Pulumi YAML checker", () => {
  it("names each unknown type, property, function, argument, result and reference, and each wrong type", () => {
    const program = example();
    program.resources.fleet.properties = {
      ...program.resources.fleet.properties,
      gpuNums: "one",
      colour: "red",
      idlePeriodMinutes: "${podTitle}",
    };
    program.resources.extra = { type: "gpucloud:index:Volume" };
    program.variables.gpu["fn::invoke"].arguments = { model: "4090D" };
    program.variables.pod["fn::invoke"].function = "gpucloud:index:getPods2";
    program.variables.balance["fn::invoke"].return = "credit";
    program.outputs.gpu = "${gpus.gpuName}";
    program.outputs.instanceUuids = "${fleet.instanceId}";
    // A component has a URN, but no id.
    program.outputs.fleetId = "${fleet.id}";
    expect(problems(program)).toEqual([
      'resources.extra.type: "gpucloud:index:Volume" is not a resource of the package',
      expect.stringMatching(
        /^variables\.gpu\.fn::invoke\.arguments\.model: not a property \(known: name, includeInvalid\)$/,
      ),
      "variables.gpu.fn::invoke.arguments.name: required but not set",
      "variables.pod.fn::invoke.function: gpucloud:index:getPods2 is not a function of the package",
      'variables.balance.fn::invoke.return: "credit" is not a result of gpucloud:index:getBalance',
      "resources.fleet.properties.gpuNums: expected integer, got string",
      "resources.fleet.properties.idlePeriodMinutes: expected integer, got string",
      expect.stringMatching(/^resources\.fleet\.properties\.colour: not a property/),
      "outputs.gpu: ${gpus.gpuName} names gpus, which is no config, variable or resource",
      'outputs.instanceUuids: ${fleet.instanceId}: gpucloud:index:Fleet has no "instanceId"',
      'outputs.fleetId: ${fleet.id}: gpucloud:index:Fleet has no "id"',
    ]);
  });

  it("takes an integer where a number is expected, not the other way round, and checks nested objects", () => {
    const program = {
      name: "p",
      runtime: "yaml",
      config: { price: { type: "number", default: 1.5 }, count: { type: "integer", default: "2" } },
      resources: {
        i: {
          type: "gpucloud:index:Instance",
          properties: { gpuUuid: "g", gpuNums: "${price}", podUuid: "p" },
        },
      },
      outputs: { sshPort: "${i.services[0].ssh.port}", missing: "${i.services[0].ssh.door}" },
    };
    expect(problems(program)).toEqual([
      "config.count.default: expected integer, got string",
      "resources.i.properties.gpuNums: expected integer, got number",
      'outputs.missing: ${i.services[0].ssh.door}: gpucloud:index:ServiceOutputSsh has no "door"',
    ]);
  });
});

describe("examples/yaml-fleet through the native plugin, under the cost guard policy pack", () => {
  // The YAML program run by dev/yaml-program.ts as Pulumi YAML runs it, its resources through the plugin.
  let emulator: RunningEmulator;
  let stack: Stack;
  beforeAll(async () => {
    assertBuilt();
    ensurePackageLink();
    emulator = await startEmulator({ port: 0, timeScale: 60, apiKeys: ["demo-key"] });
    stack = await Stack.open({
      program: path.join(REPO_ROOT, "dist", "dev", "yaml-fleet-program.js"),
      project: "gpucloud-yaml-fleet",
      stack: "test",
      config: { "gpucloud:baseUrl": emulator.url, "gpucloud:apiKey": secret("demo-key") },
      frontDoor: nativeFrontDoor(),
      policyPacks: [costGuardPolicyPack({ "gpucloud-stack-hourly-budget": { maxHourlyCost: 5 } })],
    });
  });
  afterAll(async () => {
    await stack?.close();
    await emulator?.close();
  });

  it("passes within budget: two instances of one 4090D each, 4.16 CNY/h, the members the plugin's Construct declared", async () => {
    const preview = await stack.preview();
    const member = (type: string) => `gpucloud:index:Fleet$gpucloud:index:${type}`;
    expect(Object.fromEntries(preview.steps.map((s) => [s.name, `${s.urn.split("::")[2]} ${s.op}`]))).toEqual(
      {
        fleet: "gpucloud:index:Fleet create",
        "fleet-0": `${member("Instance")} create`,
        "fleet-0-idle": `${member("IdleClosePolicy")} create`,
        "fleet-1": `${member("Instance")} create`,
        "fleet-1-idle": `${member("IdleClosePolicy")} create`,
      },
    );
    expect(preview.outputs.hourlyPrice).toBe(4.16);
    expect(preview.policyViolations).toEqual([]);
  });

  it("fails the preview over budget when the stack's config asks for two GPUs each", async () => {
    await stack.setConfig({
      "gpucloud:baseUrl": emulator.url,
      "gpucloud:apiKey": secret("demo-key"),
      "gpucloud-yaml-fleet:gpuCount": "2",
    });
    const failed = await stack.preview().catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(OperationError);
    expect((failed as OperationError).policyViolations.map((v) => v.message)).toEqual([
      expect.stringContaining(
        "The stack's 2 running instances would cost 7.92 CNY/h, over maxHourlyCost 5 CNY/h. The most expensive:\n" +
          '  fleet "fleet": 2 members at 3.96 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 2) = 7.92 CNY/h\n',
      ),
    ]);
  });
});
