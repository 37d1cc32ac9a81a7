/**
 * examples/yaml-fleet, the Pulumi YAML program of the native plugin, against the package schema: every
 * resource type, property, function, argument and result it uses exists, with the right types. The
 * checker itself is shown to catch each kind of mistake, so a clean answer means something.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import type { PackageSchema } from "../../provider/codegen/package-schema";
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
    expect(Object.values(program.resources).map((r) => (r as { type: string }).type)).toEqual([
      "gpucloud:index:Instance",
      "gpucloud:index:IdleClosePolicy",
      "gpucloud:index:Instance",
      "gpucloud:index:IdleClosePolicy",
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
    program.resources["fleet-0"].properties = { gpuUuid: "${gpu.gpuUuid}", gpuNums: "one", colour: "red" };
    program.resources["fleet-0-idle"].properties.instanceUuid = "${fleet-0.instanceId}";
    program.resources["fleet-1-idle"].properties.idlePeriodMinutes = "${podTitle}";
    program.resources.extra = { type: "gpucloud:index:Volume" };
    program.variables.gpu["fn::invoke"].arguments = { model: "4090D" };
    program.variables.pod["fn::invoke"].function = "gpucloud:index:getPods2";
    program.variables.balance["fn::invoke"].return = "credit";
    program.outputs.gpu = "${gpus.gpuName}";
    expect(problems(program)).toEqual([
      'resources.extra.type: "gpucloud:index:Volume" is not a resource of the package',
      expect.stringMatching(
        /^variables\.gpu\.fn::invoke\.arguments\.model: not a property \(known: name, includeInvalid\)$/,
      ),
      "variables.gpu.fn::invoke.arguments.name: required but not set",
      "variables.pod.fn::invoke.function: gpucloud:index:getPods2 is not a function of the package",
      'variables.balance.fn::invoke.return: "credit" is not a result of gpucloud:index:getBalance',
      "resources.fleet-0.properties.gpuNums: expected integer, got string",
      expect.stringMatching(/^resources\.fleet-0\.properties\.colour: not a property/),
      'resources.fleet-0-idle.properties.instanceUuid: ${fleet-0.instanceId}: gpucloud:index:Instance has no "instanceId"',
      "resources.fleet-1-idle.properties.idlePeriodMinutes: expected integer, got string",
      "outputs.gpu: ${gpus.gpuName} names gpus, which is no config, variable or resource",
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
