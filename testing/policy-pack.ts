/**
 * Policy packs, run the way the Pulumi engine runs them for `pulumi preview --policy-pack DIR
 * --policy-pack-config FILE`: the pack's Node program started through @pulumi/pulumi's
 * `cmd/run-policy-pack` in the pack's folder, with the stack's config and names in its environment (as
 * Pulumi's nodejs language host hands them over), then Pulumi's Analyzer protocol over gRPC: ConfigureStack,
 * GetAnalyzerInfo, the pack's config reconciled with the policies' schemas and defaults, Configure,
 * Analyze for each resource and AnalyzeStack for the whole stack.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type * as GrpcModule from "@grpc/grpc-js";
import type * as EmptyProto from "google-protobuf/google/protobuf/empty_pb";
import type * as StructProto from "google-protobuf/google/protobuf/struct_pb";
import type * as AnalyzerGrpc from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import type * as AnalyzerProto from "@pulumi/pulumi/proto/analyzer_pb";
import { z } from "zod";
import { messageOf } from "../provider/framework/errors";
import { packageRoot } from "../provider/package-root";
import { PluginProcess, nodeExitingWithEngine } from "./plugin-process";
import { secretKeys, stringConfig } from "./program";
import { pulumiProtocolBase } from "./provider-process";
import type { Props } from "./wire";

export type EnforcementLevel = "advisory" | "mandatory" | "remediate" | "disabled";

/**
 * What a `--policy-pack-config` file holds: for each policy by name (or `all`, for every policy's
 * enforcement level), an enforcement level, or the policy's config properties with an optional
 * `enforcementLevel`. For example `{ "gpucloud-stack-hourly-budget": { maxHourlyCost: 20 }, "gpucloud-idle-shutdown": "mandatory" }`.
 */
export type PolicyPackConfig = Record<
  string,
  EnforcementLevel | ({ enforcementLevel?: EnforcementLevel } & Record<string, unknown>)
>;

/** A policy pack for `Stack.open`'s `policyPacks`: `--policy-pack path --policy-pack-config <config>`. */
export interface PolicyPackOptions {
  /** The pack's folder, holding PulumiPolicy.yaml (e.g. `node_modules/pulumi-gpucloud/policy-pack`). */
  path: string;
  config?: PolicyPackConfig;
}

/**
 * This package's cost guard, the pack folder it ships (`node_modules/pulumi-gpucloud/policy-pack`), with
 * `config` as a `--policy-pack-config` file would give it.
 */
export function costGuardPolicyPack(config?: PolicyPackConfig): PolicyPackOptions {
  return { path: path.join(packageRoot(), "policy-pack"), ...(config ? { config } : {}) };
}

/** One violation a policy reported, as `pulumi preview` lists it under "Policies". */
export interface PolicyViolation {
  policyPack: string;
  policyPackVersion: string;
  policy: string;
  /** The policy's description. */
  description: string;
  /** What the policy reported, as the pack sent it (the @pulumi/policy SDK puts the description first). */
  message: string;
  /** Mandatory violations fail the preview (and stop an up before it changes anything); advisory ones are reported. */
  enforcementLevel: "advisory" | "mandatory";
  severity?: "low" | "medium" | "high" | "critical";
  /** The resource in violation; absent when the stack as a whole is. */
  urn?: string;
}

/** Mandatory policy violations stopped the operation. */
export class PolicyViolationError extends Error {
  override readonly name = "PolicyViolationError";
  constructor(readonly violations: PolicyViolation[]) {
    super(`mandatory policy violations:\n${policyReport(violations)}`);
  }
}

/**
 * Violations as the Pulumi CLI prints them after a preview or update: per violation its level, pack,
 * policy and resource (or the stack), then the policy's message.
 */
export function policyReport(violations: readonly PolicyViolation[]): string {
  return violations
    .map((v) => {
      const where = v.urn ? v.urn.split("::").slice(-2).join(": ") : "the stack";
      const message = v.message
        .split("\n")
        .map((line) => `    ${line}`)
        .join("\n");
      return `  [${v.enforcementLevel}]  ${v.policyPack}@v${v.policyPackVersion}  ${v.policy}  (${where})\n${message}`;
    })
    .join("\n");
}

/** A resource as the engine shows it to a policy pack. */
export interface AnalyzedResource {
  urn: string;
  type: string;
  name: string;
  /** Inputs (Analyze) or outputs (AnalyzeStack) in wire form: secrets wrapped, a preview's unknowns as UNKNOWN. */
  properties: Props;
  additionalSecretOutputs: string[];
  /** URNs this resource depends on. */
  dependencies: string[];
  /** URNs each input came from. */
  propertyDependencies: Record<string, string[]>;
  /** The URN of its parent (a component), as the engine sends it in the resource's options. */
  parent?: string;
}

/** The stack a pack runs for: what the engine and the language host tell it. */
export interface PolicyStackContext {
  project: string;
  stack: string;
  /** Stack config, fully qualified keys, secrets wrapped. */
  config: Props;
  env: NodeJS.ProcessEnv;
  /** True for a preview. */
  dryRun: boolean;
}

interface Protocol {
  grpc: typeof GrpcModule;
  Struct: typeof StructProto.Struct;
  Empty: typeof EmptyProto.Empty;
  rpc: typeof AnalyzerGrpc;
  proto: typeof AnalyzerProto;
}

let protocol: Protocol | undefined;

/** The Analyzer protocol from the @pulumi/pulumi this package runs with, as the resource provider's is. */
function loadProtocol(): Protocol {
  if (protocol) return protocol;
  const { grpc, Struct, fromPulumi } = pulumiProtocolBase();
  protocol = {
    grpc,
    Struct,
    Empty: (fromPulumi("google-protobuf/google/protobuf/empty_pb") as typeof EmptyProto).Empty,
    rpc: fromPulumi("./proto/analyzer_grpc_pb"),
    proto: fromPulumi("./proto/analyzer_pb"),
  };
  return protocol;
}

const LEVELS: Record<number, EnforcementLevel> = {
  0: "advisory",
  1: "mandatory",
  2: "disabled",
  3: "remediate",
};
const SEVERITIES = [undefined, "low", "medium", "high", "critical"] as const;

function levelNumber(level: EnforcementLevel): number {
  return Number(Object.entries(LEVELS).find(([, name]) => name === level)![0]);
}

/** The organization a stack of a self-managed backend belongs to, as the engine names it. */
const ORGANIZATION = "organization";

/** One policy pack's process and the engine's side of the Analyzer protocol with it. */
export class PolicyPackProcess {
  private constructor(
    private readonly plugin: PluginProcess,
    private readonly client: AnalyzerGrpc.AnalyzerClient,
  ) {}

  /** Starts the pack and configures it; every failure is a rejection naming the pack. */
  static async start(pack: PolicyPackOptions, stack: PolicyStackContext): Promise<PolicyPackProcess> {
    const dir = path.resolve(pack.path);
    const plugin = await PluginProcess.start({
      description: `the policy pack ${dir}`,
      ...nodeExitingWithEngine(runPolicyPack(dir), ["127.0.0.1:1", dir]),
      // Pulumi runs a nodejs pack in its own folder: it reads its package.json from there.
      cwd: dir,
      env: {
        ...stack.env,
        // The language host hands the stack config over in plain text, secrets decrypted, as it does to programs.
        PULUMI_CONFIG: JSON.stringify(stringConfig(stack.config)),
        PULUMI_NODEJS_ORGANIZATION: ORGANIZATION,
        PULUMI_NODEJS_PROJECT: stack.project,
        PULUMI_NODEJS_STACK: stack.stack,
        PULUMI_NODEJS_DRY_RUN: String(stack.dryRun),
      },
    });
    const { grpc, rpc } = loadProtocol();
    const client = new rpc.AnalyzerClient(`127.0.0.1:${plugin.port}`, grpc.credentials.createInsecure());
    const started = new PolicyPackProcess(plugin, client);
    try {
      await started.configureStack(stack);
      const info = await started.call<AnalyzerProto.AnalyzerInfo>((cb) =>
        client.getAnalyzerInfo(new (loadProtocol().Empty)(), cb),
      );
      await started.configure(reconciledConfig(info, pack.config ?? {}));
    } catch (err) {
      await started.stop();
      throw new Error(`Could not start the policy pack ${dir}: ${messageOf(err)}`, { cause: err });
    }
    return started;
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.plugin.stop();
  }

  private call<Res>(
    invoke: (cb: (err: GrpcModule.ServiceError | null, res: Res) => void) => unknown,
  ): Promise<Res> {
    return new Promise((resolve, reject) =>
      invoke((err, res) => {
        if (!err) return resolve(res);
        reject(this.plugin.exited ? this.plugin.exitedDuringCall() : new Error(err.details || err.message));
      }),
    );
  }

  private async configureStack(stack: PolicyStackContext): Promise<void> {
    const { proto } = loadProtocol();
    const req = new proto.AnalyzerStackConfigureRequest();
    req.setStack(stack.stack);
    req.setProject(stack.project);
    req.setOrganization(ORGANIZATION);
    req.setDryRun(stack.dryRun);
    for (const [key, value] of Object.entries(stringConfig(stack.config))) req.getConfigMap().set(key, value);
    req.setConfigSecretKeysList(secretKeys(stack.config));
    await this.call((cb) => this.client.configureStack(req, cb));
  }

  private async configure(config: ReconciledConfig): Promise<void> {
    const { proto, Struct } = loadProtocol();
    const req = new proto.ConfigureAnalyzerRequest();
    for (const [policy, { enforcementLevel, properties }] of Object.entries(config)) {
      const entry = new proto.PolicyConfig();
      entry.setEnforcementlevel(levelNumber(enforcementLevel));
      entry.setProperties(Struct.fromJavaScript(properties as Parameters<typeof Struct.fromJavaScript>[0]));
      req.getPolicyconfigMap().set(policy, entry);
    }
    await this.call((cb) => this.client.configure(req, cb));
  }

  /** The violations of one resource's inputs, each of that resource (the engine reports them under its URN). */
  async analyze(resource: AnalyzedResource): Promise<PolicyViolation[]> {
    const { proto } = loadProtocol();
    const req = new proto.AnalyzeRequest();
    req.setUrn(resource.urn);
    req.setType(resource.type);
    req.setName(resource.name);
    req.setProperties(struct(resource.properties));
    req.setOptions(options(resource));
    const res = await this.call<AnalyzerProto.AnalyzeResponse>((cb) => this.client.analyze(req, cb));
    return res.getDiagnosticsList().map((d) => ({ ...violation(d), urn: resource.urn }));
  }

  /** The violations of the stack as a whole, given each resource's outputs. */
  async analyzeStack(resources: readonly AnalyzedResource[]): Promise<PolicyViolation[]> {
    const { proto } = loadProtocol();
    const req = new proto.AnalyzeStackRequest();
    for (const r of resources) {
      const resource = new proto.AnalyzerResource();
      resource.setUrn(r.urn);
      resource.setType(r.type);
      resource.setName(r.name);
      resource.setProperties(struct(r.properties));
      resource.setOptions(options(r));
      resource.setDependenciesList(r.dependencies);
      if (r.parent) resource.setParent(r.parent);
      for (const [property, urns] of Object.entries(r.propertyDependencies)) {
        const deps = new proto.AnalyzerPropertyDependencies();
        deps.setUrnsList(urns);
        resource.getPropertydependenciesMap().set(property, deps);
      }
      req.addResources(resource);
    }
    const res = await this.call<AnalyzerProto.AnalyzeResponse>((cb) => this.client.analyzeStack(req, cb));
    return res.getDiagnosticsList().map(violation);
  }
}

/**
 * `@pulumi/pulumi/cmd/run-policy-pack` as the nodejs language host finds it: resolved from the pack's
 * folder, so from the project that installed the pack (or the pack's own node_modules).
 */
function runPolicyPack(dir: string): string {
  if (!fs.existsSync(path.join(dir, "PulumiPolicy.yaml"))) {
    throw new Error(`No policy pack at ${dir}: it has no PulumiPolicy.yaml.`);
  }
  try {
    return require.resolve("@pulumi/pulumi/cmd/run-policy-pack", { paths: [dir] });
  } catch {
    throw new Error(
      `The policy pack ${dir} cannot find @pulumi/pulumi: it looks like the policy pack's dependencies are ` +
        `not installed; run npm install in ${dir} (or in the project that holds it).`,
    );
  }
}

function struct(props: Props): StructProto.Struct {
  const { Struct } = loadProtocol();
  return Struct.fromJavaScript(props as Parameters<typeof Struct.fromJavaScript>[0]);
}

function options(resource: AnalyzedResource): AnalyzerProto.AnalyzerResourceOptions {
  const opts = new (loadProtocol().proto.AnalyzerResourceOptions)();
  opts.setAdditionalsecretoutputsList(resource.additionalSecretOutputs);
  if (resource.parent) opts.setParent(resource.parent);
  return opts;
}

function violation(d: AnalyzerProto.AnalyzeDiagnostic): PolicyViolation {
  const level = LEVELS[d.getEnforcementlevel()];
  const severity = SEVERITIES[d.getSeverity()];
  return {
    policyPack: d.getPolicypackname(),
    policyPackVersion: d.getPolicypackversion(),
    policy: d.getPolicyname(),
    description: d.getDescription(),
    message: d.getMessage(),
    // The engine counts a violation a remediation could not mend as mandatory.
    enforcementLevel: level === "advisory" ? "advisory" : "mandatory",
    ...(severity ? { severity } : {}),
    ...(d.getUrn() ? { urn: d.getUrn() } : {}),
  };
}

type ReconciledConfig = Record<string, { enforcementLevel: EnforcementLevel; properties: Props }>;

/**
 * The engine's reconciliation of a pack's config: each policy's enforcement level and its schema's
 * defaults, then the pack's initial config, then the user's (`all` first); the result is checked against
 * each policy's schema, and any mismatch fails the run naming the policy and the property.
 */
function reconciledConfig(info: AnalyzerProto.AnalyzerInfo, given: PolicyPackConfig): ReconciledConfig {
  const result: ReconciledConfig = {};
  const schemas = new Map<string, { properties: Props; required: string[] }>();
  for (const policy of info.getPoliciesList()) {
    const schema = policy.getConfigschema();
    const properties = (schema?.getProperties()?.toJavaScript() ?? {}) as Record<
      string,
      { default?: unknown }
    >;
    schemas.set(policy.getName(), { properties, required: schema?.getRequiredList() ?? [] });
    const defaults = Object.entries(properties).filter(([, p]) => p.default !== undefined);
    result[policy.getName()] = {
      enforcementLevel: LEVELS[policy.getEnforcementlevel()],
      properties: Object.fromEntries(defaults.map(([name, p]) => [name, p.default])),
    };
  }
  const initial: PolicyPackConfig = {};
  info.getInitialconfigMap().forEach((config, policy) => {
    initial[policy] = {
      enforcementLevel: LEVELS[config.getEnforcementlevel()],
      ...(config.getProperties()?.toJavaScript() ?? {}),
    };
  });
  apply(result, initial);
  apply(result, given);
  const problems = [...schemas].flatMap(([policy, schema]) =>
    configProblems(schema, result[policy]?.properties ?? {}).map((p) => `${policy}: ${p}`),
  );
  if (problems.length > 0) throw new Error(`the policy pack config is invalid: ${problems.join("; ")}`);
  return result;
}

function apply(result: ReconciledConfig, given: PolicyPackConfig): void {
  const levelOf = (entry: PolicyPackConfig[string]) =>
    typeof entry === "string" ? entry : entry.enforcementLevel;
  const all = given.all === undefined ? undefined : levelOf(given.all);
  if (all) for (const policy of Object.values(result)) policy.enforcementLevel = all;
  for (const [name, entry] of Object.entries(given)) {
    if (name === "all") continue;
    const level = levelOf(entry);
    if (level !== undefined && !Object.values(LEVELS).includes(level)) {
      throw new Error(
        `the policy pack config gives ${name} the enforcement level "${level}", which is none of ${Object.values(LEVELS).join(", ")}`,
      );
    }
    const { enforcementLevel: _level, ...properties } = typeof entry === "string" ? {} : entry;
    const current = result[name] ?? { enforcementLevel: level ?? "advisory", properties: {} };
    result[name] = {
      enforcementLevel: level ?? current.enforcementLevel,
      properties: { ...current.properties, ...properties },
    };
  }
}

/** What a policy's config breaks of its JSON schema, each naming the property. */
function configProblems(schema: { properties: Props; required: string[] }, config: Props): string[] {
  const check = z.fromJSONSchema({
    type: "object",
    properties: schema.properties,
    required: schema.required,
  } as Parameters<typeof z.fromJSONSchema>[0]);
  const parsed = check.safeParse(config);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return `${where}${issue.message}`;
  });
}

/** The policy packs of one preview or up, each started for it as the engine starts them for each run. */
export class PolicyRun {
  /** Every violation reported so far, in the order they came. */
  readonly violations: PolicyViolation[] = [];

  private constructor(private readonly packs: PolicyPackProcess[]) {}

  static async start(packs: readonly PolicyPackOptions[], stack: PolicyStackContext): Promise<PolicyRun> {
    const started = await Promise.allSettled(packs.map((pack) => PolicyPackProcess.start(pack, stack)));
    const running = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = started.find((s) => s.status === "rejected");
    if (failed) {
      await Promise.all(running.map((pack) => pack.stop()));
      throw failed.reason;
    }
    return new PolicyRun(running);
  }

  /** Every pack's violations of one resource's inputs; returns the mandatory ones. */
  async analyze(resource: AnalyzedResource): Promise<PolicyViolation[]> {
    return this.found(await Promise.all(this.packs.map((pack) => pack.analyze(resource))));
  }

  /** Every pack's violations of the whole stack; returns the mandatory ones. */
  async analyzeStack(resources: readonly AnalyzedResource[]): Promise<PolicyViolation[]> {
    return this.found(await Promise.all(this.packs.map((pack) => pack.analyzeStack(resources))));
  }

  get mandatory(): PolicyViolation[] {
    return this.violations.filter((v) => v.enforcementLevel === "mandatory");
  }

  async stop(): Promise<void> {
    await Promise.all(this.packs.map((pack) => pack.stop()));
  }

  private found(perPack: PolicyViolation[][]): PolicyViolation[] {
    const found = perPack.flat();
    this.violations.push(...found);
    return found.filter((v) => v.enforcementLevel === "mandatory");
  }
}
