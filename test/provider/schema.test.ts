/**
 * schema.json, the generated classes and the reference pages are derived from the resource definitions,
 * the data sources' declarations and the settings table (provider/codegen): checked in, kept equal to what
 * the generator writes, well formed, and true to what the provider really returns. What the pages say is
 * tested in reference-docs.test.ts.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  generatedDrift,
  generatedFiles,
  GENERATED_FOLDERS,
  writeGeneratedFiles,
} from "../../provider/codegen/generate";
import type { PackageSchema } from "../../provider/codegen/package-schema";
import { dataSources } from "../../provider/datasources/functions";
import { REPO_ROOT } from "../harness";
import { DEMO_KEY } from "../emulator/helpers";
import { IDLE_CLOSE_POLICY_INPUTS, INSTANCE_INPUTS, INSTANCE_OUTPUTS } from "../support/design";
import { schemaProblems, valueProblems } from "../support/pulumi-schema";
import { startWorld, type World } from "../support/world";

const INSTANCE = "gpucloud:index:Instance";
const POLICY = "gpucloud:index:IdleClosePolicy";
const IMAGE = "gpucloud:index:PersonalImage";
const FLEET = "gpucloud:index:Fleet";
const FUNCTIONS = [
  "getGpus",
  "getGpu",
  "getPods",
  "getPod",
  "getMarketImages",
  "getPersonalImages",
  "getInstances",
  "getBalance",
  "getWorkflow",
];

let files: Map<string, string>;
let schema: PackageSchema;
beforeAll(() => {
  files = generatedFiles(REPO_ROOT);
  schema = JSON.parse(files.get("schema.json")!) as PackageSchema;
}, 60_000);

describe("the generated files", () => {
  it("are checked in exactly as the definitions generate them (npm run build writes them)", () => {
    expect(generatedDrift(REPO_ROOT, files)).toEqual([]);
    for (const folder of GENERATED_FOLDERS) {
      const present = fs.readdirSync(path.join(REPO_ROOT, folder)).map((f) => `${folder}/${f}`);
      expect(present.sort()).toEqual([...files.keys()].filter((f) => f.startsWith(`${folder}/`)).sort());
    }
  });

  describe("in a package whose checked-in files went astray", () => {
    let root: string;
    beforeAll(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), "generated-"));
      expect(writeGeneratedFiles(root, files).sort()).toEqual([...files.keys()].sort());
    });
    afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

    it("names each file that differs or is no longer generated, and the command that puts it right", () => {
      expect(generatedDrift(root, files)).toEqual([]);
      fs.appendFileSync(path.join(root, "docs/resources/instance.md"), "A hand edit.\n");
      fs.rmSync(path.join(root, "docs/data-sources/get-gpu.md"));
      fs.writeFileSync(path.join(root, "docs/data-sources/get-old.md"), "# getOld\n");
      expect(generatedDrift(root, files).sort()).toEqual([
        "docs/data-sources/get-gpu.md is not what the definitions generate: run `npm run build` to write it",
        "docs/data-sources/get-old.md is no longer generated: run `npm run build` to remove it",
        "docs/resources/instance.md is not what the definitions generate: run `npm run build` to write it",
      ]);
    });

    it("is put right by writing what differs and removing what is no longer generated", () => {
      expect(writeGeneratedFiles(root, files).sort()).toEqual([
        "docs/data-sources/get-gpu.md",
        "docs/data-sources/get-old.md",
        "docs/resources/instance.md",
      ]);
      expect(generatedDrift(root, files)).toEqual([]);
    });
  });
});

describe("the package schema", () => {
  // The names are those of docs/design/contracts.md#the-native-plugin.
  it("names the package, its resources, its functions and its settings as the contract does", () => {
    expect(schema.name).toBe("gpucloud");
    expect(Object.keys(schema.resources).sort()).toEqual([FLEET, POLICY, INSTANCE, IMAGE]);
    expect(Object.keys(schema.functions).sort()).toEqual(FUNCTIONS.map((f) => `gpucloud:index:${f}`).sort());
    // The contract's four, and the provider's own sharedAccount (docs/design/contracts.md#configuration).
    expect(Object.keys(schema.config.variables).sort()).toEqual([
      "apiKey",
      "baseUrl",
      "pollIntervalMs",
      "requestTimeoutMs",
      "sharedAccount",
    ]);
    expect(schema.config.variables.sharedAccount).toMatchObject({
      type: "boolean",
      default: true,
      defaultInfo: { environment: ["GPUCLOUD_SHARED_ACCOUNT"] },
    });
    expect(schema.config.variables.apiKey).toMatchObject({ type: "string", secret: true });
    expect(schema.config.variables.requestTimeoutMs).toMatchObject({
      type: "integer",
      default: 30000,
      defaultInfo: { environment: ["GPUCLOUD_REQUEST_TIMEOUT_MS"] },
    });
    expect(schema.provider.inputProperties).toEqual(schema.config.variables);
  });

  // The inputs and outputs of docs/design/contracts.md#resources.
  it("gives each resource the inputs and outputs of the contract under the same names", () => {
    const instance = schema.resources[INSTANCE];
    expect(Object.keys(instance.inputProperties)).toEqual(expect.arrayContaining([...INSTANCE_INPUTS]));
    expect(instance.requiredInputs).toEqual(["gpuUuid", "gpuNums"]);
    expect(Object.keys(instance.properties)).toEqual(expect.arrayContaining([...INSTANCE_OUTPUTS]));
    const secret = (r: string) =>
      Object.keys(schema.resources[r].properties).filter((p) => schema.resources[r].properties[p].secret);
    expect([secret(INSTANCE), secret(POLICY), secret(IMAGE)]).toEqual([["sshPasswords"], [], []]);
    expect(instance.inputProperties.gpuNums).toMatchObject({ type: "integer", willReplaceOnChanges: true });
    expect(instance.inputProperties.title.willReplaceOnChanges).toBeUndefined();
    expect(instance.inputProperties.shutdownAt.oneOf).toEqual([{ type: "integer" }, { type: "string" }]);

    const policy = schema.resources[POLICY];
    expect(Object.keys(policy.inputProperties)).toEqual([...IDLE_CLOSE_POLICY_INPUTS]);
    expect(policy.requiredInputs).toEqual(["instanceUuid", "idlePeriodMinutes"]);
    expect(policy.inputProperties.destroyOnIdle).toMatchObject({ type: "boolean", default: false });
    expect(Object.keys(schema.resources[IMAGE].inputProperties)).toContain("instanceUuid");
  });

  // The Fleet of docs/design/contracts.md#fleet: a component whose member inputs are the Instance's own.
  it("declares the Fleet a component, with the Instance's inputs for its members and its own outputs", () => {
    const fleet = schema.resources[FLEET];
    expect(fleet.isComponent).toBe(true);
    expect(Object.keys(fleet.inputProperties)).toEqual([
      "size",
      "podUuid",
      "podTag",
      "imageUuid",
      "gpuUuid",
      "fallbackGpuUuids",
      "gpuNums",
      "running",
      "waitForServices",
      "waitTimeoutSeconds",
      "idlePeriodMinutes",
      "destroyOnIdle",
      "replaceMembers",
    ]);
    for (const input of ["podUuid", "gpuUuid", "gpuNums", "running", "waitForServices"]) {
      expect({ input, spec: fleet.inputProperties[input] }).toEqual({
        input,
        spec: (({ willReplaceOnChanges: _, ...rest }) => rest)(
          schema.resources[INSTANCE].inputProperties[input],
        ),
      });
    }
    expect(fleet.requiredInputs).toEqual(["size", "gpuUuid", "gpuNums"]);
    expect(fleet.inputProperties.size).toMatchObject({ type: "integer" });
    expect(Object.keys(fleet.properties)).toEqual(["instanceUuids", "serverUrls", "hourlyPrice"]);
  });

  it("takes each function's arguments and returns its results under the TypeScript names", () => {
    const fn = (name: string) => schema.functions[`gpucloud:index:${name}`];
    expect(Object.keys(fn("getGpu").inputs!.properties)).toEqual(["name", "includeInvalid"]);
    expect(fn("getGpu").inputs!.required).toEqual(["name"]);
    expect(Object.keys(fn("getPod").inputs!.properties)).toEqual(["title", "tag"]);
    expect(Object.keys(fn("getMarketImages").inputs!.properties)).toEqual(["cudaVersion", "pythonVersion"]);
    expect(fn("getBalance").inputs).toBeUndefined();
    expect(Object.keys(fn("getBalance").outputs.properties)).toEqual(["balance", "cardBalance", "currency"]);
    expect(fn("getGpus").outputs.properties.gpus).toEqual({
      type: "array",
      items: { $ref: "#/types/gpucloud:index:GpuModel" },
      description: "The models in catalogue order.",
    });
  });

  it("is well formed: tokens, references that resolve, required properties that exist, Pulumi types", () => {
    expect(schemaProblems(schema)).toEqual([]);
  });

  it("describes every resource, input and output, and every function", () => {
    const undescribed = Object.entries(schema.resources).flatMap(([token, r]) => [
      ...(r.description ? [] : [token]),
      ...Object.entries({ ...r.inputProperties, ...r.properties })
        .filter(([, p]) => !p.description)
        .map(([name]) => `${token}.${name}`),
    ]);
    expect(undescribed).toEqual([]);
    expect(Object.entries(schema.functions).filter(([, f]) => !f.description)).toEqual([]);
  });

  it("cites no file a user does not have", () => {
    const text = files.get("schema.json")!;
    expect(text.match(/[\w-]+\.(md|ts)\b|DESIGN/g)).toBeNull();
  });
});

describe("the schema's types against what the provider returns", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w?.stop());

  const outputsOf = (state: { outputs: Record<string, unknown> }) => state.outputs;

  it("fit the outputs of each resource", async () => {
    const instance = await w.advancing(
      w.h.create(
        "Instance",
        await w.h.checked("Instance", { ...w.spec, title: "typed", shutdownAt: 4_000_000_000 }),
      ),
    );
    const policy = await w.h.create(
      "IdleClosePolicy",
      await w.h.checked("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 30 }),
    );
    const image = await w.advancing(
      w.h.create("PersonalImage", await w.h.checked("PersonalImage", { instanceUuid: instance.id })),
      20,
    );
    expect([
      ...valueProblems(schema, schema.resources[INSTANCE], outputsOf(instance), "Instance"),
      ...valueProblems(schema, schema.resources[POLICY], outputsOf(policy), "IdleClosePolicy"),
      ...valueProblems(schema, schema.resources[IMAGE], outputsOf(image), "PersonalImage"),
    ]).toEqual([]);
    expect(Object.keys(instance.outputs.sshPasswords as object).length).toBeGreaterThan(0);
  });

  it("fit the results of every function", async () => {
    const opts = { baseUrl: w.emu.url, apiKey: DEMO_KEY };
    const args: Record<string, object> = {
      getGpu: { name: "4090D" },
      getPod: { title: "ComfyUI" },
      getWorkflow: { workflowId: "wf_portrait_studio" },
    };
    const problems: string[] = [];
    for (const name of FUNCTIONS) {
      const invoke = dataSources[name as keyof typeof dataSources] as (
        a: object,
        o: object,
      ) => Promise<unknown>;
      const result = await invoke(args[name] ?? {}, opts);
      problems.push(
        ...valueProblems(schema, schema.functions[`gpucloud:index:${name}`].outputs, result, name),
      );
    }
    expect(problems).toEqual([]);
  });
});
