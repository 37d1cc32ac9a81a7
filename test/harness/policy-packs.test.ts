/**
 * Policy packs under pulumi-gpucloud/testing: the cost guard's folder as the package ships it, started
 * from a project that installed the package the way the nodejs language host starts it, and the
 * engine's handling of a pack's config (schema defaults, `all`, validation) and of packs that cannot start.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { parse } from "yaml";
import { installPackedCopy, type InstalledProject } from "../../dev/installed";
import { REPO_ROOT } from "../../dev/self-link";
import { costGuardPolicyPack, OperationError, secret } from "../../testing";
import { PolicyRun, type AnalyzedResource, type PolicyPackConfig } from "../../testing/policy-pack";
import { GPU_4090D, GPU_5090, POD_COMFYUI } from "../policy/stack-view";
import { openExample, type ExampleRun } from "../examples/helpers";

const manifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));

/** An instance as a stack shows it to a pack: 8 GPUs each, which no catalogue is needed to count. */
function instance(i: number): AnalyzedResource {
  const type = "gpucloud:index:Instance";
  return {
    urn: `urn:pulumi:test::p::${type}::big-${i}`,
    type,
    name: `big-${i}`,
    properties: { podUuid: "p", gpuUuid: "g", gpuNums: 8, title: `big-${i}`, running: true },
    additionalSecretOutputs: [],
    dependencies: [],
    propertyDependencies: {},
  };
}

describe("the cost guard's policy pack folder, as the package ships it", () => {
  let project: InstalledProject;
  beforeAll(async () => {
    project = await installPackedCopy();
  }, 60_000);
  afterAll(() => project?.remove());

  it("is a nodejs policy pack of the package's version", () => {
    const folder = path.join(project.dir, "node_modules", "pulumi-gpucloud", "policy-pack");
    expect(parse(fs.readFileSync(path.join(folder, "PulumiPolicy.yaml"), "utf8"))).toMatchObject({
      runtime: "nodejs",
    });
    expect(manifest(folder).version).toBe(manifest(REPO_ROOT).version);
    expect(fs.existsSync(path.join(folder, manifest(folder).main))).toBe(true);
  });

  it("starts from a project's node_modules, finding @pulumi/policy and @pulumi/pulumi there, and judges a stack", async () => {
    const folder = path.join(project.dir, "node_modules", "pulumi-gpucloud", "policy-pack");
    const run = await PolicyRun.start([{ path: folder }], {
      project: "p",
      stack: "test",
      config: {},
      env: { PATH: process.env.PATH },
      dryRun: true,
    });
    try {
      await run.analyzeStack([instance(0), instance(1), instance(2)]);
    } finally {
      await run.stop();
    }
    const gpus = run.violations.find((v) => v.policy === "gpucloud-stack-gpus");
    expect(gpus).toMatchObject({ policyPack: "gpucloud-cost-guard", policyPackVersion: "0.1.0" });
    expect(gpus?.message).toContain(
      "The stack's 3 running instances would have 24 GPUs together, over maxGpusPerStack 16.",
    );
    // Without a base URL or key the budget is not passed: it says what is missing.
    const budget = run.violations.find((v) => v.policy === "gpucloud-stack-hourly-budget");
    expect(budget?.message).toContain("The GPU cloud base URL is not set");
  });
});

describe("policy packs that cannot start", () => {
  const context = { project: "p", stack: "test", config: {}, env: process.env, dryRun: true };

  it("names a folder without PulumiPolicy.yaml", async () => {
    await expect(PolicyRun.start([{ path: REPO_ROOT }], context)).rejects.toThrow(
      `No policy pack at ${REPO_ROOT}: it has no PulumiPolicy.yaml.`,
    );
  });

  it("says to install the dependencies of a pack that cannot find @pulumi/pulumi", async () => {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "gpucloud-bare-pack-"));
    try {
      fs.writeFileSync(path.join(dir, "PulumiPolicy.yaml"), "runtime: nodejs\n");
      await expect(PolicyRun.start([{ path: dir }], context)).rejects.toThrow(
        /cannot find @pulumi\/pulumi: it looks like the policy pack's dependencies are not installed; run npm install in/,
      );
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a config its policies' schemas do not take, naming the policy and the property", async () => {
    const pack = costGuardPolicyPack({ "gpucloud-stack-hourly-budget": { maxHourlyCost: "lots" } });
    await expect(PolicyRun.start([pack], context)).rejects.toThrow(
      /the policy pack config is invalid: gpucloud-stack-hourly-budget: maxHourlyCost: Invalid input: expected number, received string/,
    );
    const level = costGuardPolicyPack({ "gpucloud-stack-gpus": "strict" as never });
    await expect(PolicyRun.start([level], context)).rejects.toThrow(
      'gives gpucloud-stack-gpus the enforcement level "strict", which is none of advisory, mandatory, disabled, remediate',
    );
  });
});

describe("a pack's config in a preview", () => {
  let run: ExampleRun;
  beforeAll(async () => {
    // Every policy advisory, through `all`: the fleet over its budget is reported, not stopped.
    const pack = costGuardPolicyPack({
      all: "advisory",
      "gpucloud-stack-hourly-budget": { maxHourlyCost: 2 },
    });
    run = await openExample(
      "fleet",
      { "fleet:count": "1", "fleet:podTitle": "ComfyUI" },
      { policyPacks: [pack] },
    );
  });
  afterAll(() => run.close());

  it("applies `all` and each policy's own settings over the schemas' defaults", async () => {
    const preview = await run.stack.preview().catch((err: OperationError) => err);
    expect(preview).not.toBeInstanceOf(OperationError);
    const { policyViolations } = preview as {
      policyViolations: { policy: string; enforcementLevel: string }[];
    };
    expect(policyViolations.map((v) => [v.policy, v.enforcementLevel])).toEqual([
      ["gpucloud-stack-hourly-budget", "advisory"],
    ]);
  });
});

describe("the cost guard as the engine runs it: each resource's inputs before its step, the stack after", () => {
  const KEY = "pack-key";
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, timeScale: 0, apiKeys: [KEY] });
  });
  afterAll(() => emulator?.close());

  /** The pack for one run of the stack `test`, whose config points at the emulator with KEY. */
  const startRun = (config: PolicyPackConfig, dryRun: boolean) =>
    PolicyRun.start([costGuardPolicyPack(config)], {
      project: "p",
      stack: "test",
      config: { "gpucloud:baseUrl": emulator.url, "gpucloud:apiKey": secret(KEY) },
      env: process.env,
      dryRun,
    });

  /** An Instance's checked inputs as a front door shows them: the dynamic one carries its `__provider`. */
  function shown(
    door: "dynamic" | "native",
    name: string,
    props: Record<string, unknown> = {},
  ): AnalyzedResource {
    const type = door === "dynamic" ? "pulumi-nodejs:dynamic/gpucloud:Instance" : "gpucloud:index:Instance";
    return {
      urn: `urn:pulumi:test::p::${type}::${name}`,
      type,
      name,
      properties: {
        podUuid: POD_COMFYUI,
        gpuUuid: GPU_4090D,
        gpuNums: 1,
        title: name,
        running: true,
        ...props,
        ...(door === "dynamic"
          ? { __provider: "exports.handler = require('pulumi-gpucloud/dynamic/instance')" }
          : {}),
      },
      additionalSecretOutputs: [],
      dependencies: [],
      propertyDependencies: {},
    };
  }

  it.each(["dynamic", "native"] as const)(
    "prices fallbackGpuUuids from the inputs the %s front door shows, at preview",
    async (door) => {
      const run = await startRun({ "gpucloud-instance-hourly-price": { maxInstanceHourlyPrice: 5 } }, true);
      try {
        const listed = shown(door, "listed", { fallbackGpuUuids: [GPU_5090], gpuNums: 2 });
        const blocking = await run.analyze(listed);
        expect(blocking.map((v) => [v.policy, v.urn])).toEqual([
          ["gpucloud-instance-hourly-price", listed.urn],
        ]);
        expect(blocking[0].message).toContain(
          '"listed" would cost up to 6.16 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 2; worst case: fallbackGpuUuids: ' +
            "the model is chosen at create, so priced at the dearest of the list, 5090)",
        );
      } finally {
        await run.stop();
      }
    },
  );

  it("stops each instance past the budget before its step in an update, analysed side by side, then judges the stack", async () => {
    const run = await startRun({ "gpucloud-stack-hourly-budget": { maxHourlyCost: 10.4 } }, false);
    try {
      const fleet = Array.from({ length: 12 }, (_, i) => shown(i % 2 ? "dynamic" : "native", `f${i}`));
      const outcomes = await Promise.all(fleet.map((r) => run.analyze(r)));
      const admitted = fleet.filter((_, i) => outcomes[i].length === 0);
      expect(admitted).toHaveLength(5);
      expect(outcomes.flat().every((v) => v.policy === "gpucloud-stack-hourly-budget")).toBe(true);
      // What the update made: the five let through, each now with its uuid.
      const made = admitted.map((r, i) => ({
        ...r,
        properties: { ...r.properties, instanceUuid: `ins-${i}` },
      }));
      expect(await run.analyzeStack(made)).toEqual([]);
    } finally {
      await run.stop();
    }
  });

  it("refuses a config key a policy does not take, naming the key, the policy and its keys", async () => {
    const run = await startRun({ "gpucloud-stack-hourly-budget": { maxHourlyCots: 20 } }, true);
    try {
      await expect(run.analyzeStack([shown("native", "a")])).rejects.toThrow(
        /gpucloud-stack-hourly-budget the key "maxHourlyCots", which it does not take: gpucloud-stack-hourly-budget takes maxHourlyCost and enforcementLevel/,
      );
    } finally {
      await run.stop();
    }
  });

  it("never sends the stack's key to a baseUrl the pack config names: the pack refuses it", async () => {
    const seen: (string | undefined)[] = [];
    const listener = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end("{}");
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const { port } = listener.address() as AddressInfo;
    const run = await startRun(
      { "gpucloud-stack-hourly-budget": { baseUrl: `http://127.0.0.1:${port}` } },
      true,
    );
    try {
      await expect(run.analyzeStack([shown("dynamic", "a")])).rejects.toThrow(
        /the key "baseUrl", which it does not take: the cost guard reads the cloud only at the stack's own endpoint/,
      );
      await expect(run.analyze(shown("dynamic", "a"))).rejects.toThrow(/the key "baseUrl"/);
      expect(seen).toEqual([]);
    } finally {
      await run.stop();
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});
