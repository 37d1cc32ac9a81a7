/**
 * Resources as the policy SDK hands them to a policy: properties behind the SDK's own unknown-checking
 * proxy (a preview's unknowns throw its UnknownValueError when read), dependencies as resources. And a
 * policy run the way the SDK runs one: what it reports, or, when it lets an unknown through, that it
 * cannot run until `up` (the SDK reports that as advisory).
 */
import type {
  PolicyResource,
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationPolicy,
} from "@pulumi/policy";
import { UNKNOWN } from "../../testing/wire";

/** The SDK's proxy and its error: exported at run time, left out of its declarations. */
const { unknownCheckingProxy, UnknownValueError } = require("@pulumi/policy") as {
  unknownCheckingProxy<T extends object>(props: T): T;
  UnknownValueError: new (...args: never[]) => Error;
};

export { UNKNOWN };

export const DYNAMIC = "pulumi-nodejs:dynamic/gpucloud:";
export const NATIVE = "gpucloud:index:";

export interface Links {
  dependencies?: PolicyResource[];
  propertyDependencies?: Record<string, PolicyResource[]>;
  /** Its parent (a component): the engine sends its URN in the resource's options. */
  parent?: PolicyResource;
}

/** A resource of the stack `test` of project `p`, of type `<tokens><kind>`, its URN's type prefixed by its parent's. */
export function resource(
  tokens: string,
  kind: string,
  name: string,
  props: Record<string, unknown>,
  links: Links = {},
): PolicyResource {
  const type = `${tokens}${kind}`;
  const qualified = links.parent ? `${qualifiedType(links.parent)}$${type}` : type;
  return {
    type,
    name,
    urn: `urn:pulumi:test::p::${qualified}::${name}`,
    props: unknownCheckingProxy(props),
    opts: {
      protect: false,
      ignoreChanges: [],
      aliases: [],
      customTimeouts: {} as never,
      additionalSecretOutputs: [],
      ...(links.parent ? { parent: links.parent.urn } : {}),
    },
    dependencies: links.dependencies ?? [],
    propertyDependencies: links.propertyDependencies ?? {},
    ...(links.parent ? { parent: links.parent } : {}),
    isType: () => false,
    asType: () => undefined,
  };
}

function qualifiedType(resource: PolicyResource): string {
  return resource.urn.split("::")[2];
}

/** A running instance of pod ComfyUI (0.2 CNY/h) on `gpuNums` 4090D GPUs (1.88 CNY/h each), from the seed. */
export function instance(
  name: string,
  props: Record<string, unknown> = {},
  tokens = DYNAMIC,
  links: Links = {},
): PolicyResource {
  return resource(
    tokens,
    "Instance",
    name,
    { podUuid: POD_COMFYUI, gpuUuid: GPU_4090D, gpuNums: 1, title: name, running: true, ...props },
    links,
  );
}

/**
 * A Fleet of `size` members made of ComfyUI on one 4090D each unless `spec` says otherwise, as the engine
 * shows it to a resource policy: its inputs (the same token in both front doors).
 */
export function fleet(
  name: string,
  size: number,
  spec: Record<string, unknown> = {},
  parent?: PolicyResource,
): PolicyResource {
  const inputs = { size, podUuid: POD_COMFYUI, gpuUuid: GPU_4090D, gpuNums: 1, ...spec };
  const shown = resource(NATIVE, "Fleet", name, inputs, parent ? { parent } : {});
  fleetInputs.set(shown, inputs);
  return shown;
}

/** Each fleet's inputs as given: its props, behind the SDK's proxy, throw on a preview's unknowns. */
const fleetInputs = new WeakMap<PolicyResource, Record<string, unknown>>();

/** The autoname the provider titles member `index` of a fleet with (`<fleet>-<i>-<7 hex>`). */
export function memberTitle(fleetName: string, index: number): string {
  return `${fleetName}-${index}-0a1b2c${index % 10}`;
}

/** Member `index` of `of`, made of the fleet's spec (and `props`), titled with its autoname; `of`'s child. */
export function member(
  of: PolicyResource,
  index: number,
  props: Record<string, unknown> = {},
  tokens = DYNAMIC,
): PolicyResource {
  const { size: _size, ...spec } = fleetInputs.get(of)!;
  const name = `${of.name}-${index}`;
  return instance(name, { ...spec, title: memberTitle(of.name, index), ...props }, tokens, { parent: of });
}

/** A fleet's `size` members. */
export function members(of: PolicyResource, props: Record<string, unknown> = {}, tokens = DYNAMIC) {
  const size = fleetInputs.get(of)!.size as number;
  return Array.from({ length: size }, (_, i) => member(of, i, props, tokens));
}

export const POD_COMFYUI = "pod-3e8c1f0a9b7d6e54";
export const GPU_4090D = "gpu-7c2f4090d5e6f7a8";
export const GPU_5090 = "gpu-9d3a5090b9c0d1e2";

/** What a policy did with what it was shown. */
export interface Outcome {
  violations: { message: string; urn?: string }[];
  /** The unknown it let through: the SDK reports the policy as unable to run until `up`. */
  cannotRun?: string;
}

function recorder(): { outcome: Outcome; report: ReportViolation } {
  const outcome: Outcome = { violations: [] };
  const report: ReportViolation = (message: string, urn?: string) => {
    outcome.violations.push(urn === undefined ? { message } : { message, urn });
  };
  return { outcome, report };
}

async function outcomeOf(run: (report: ReportViolation) => Promise<void> | void): Promise<Outcome> {
  const { outcome, report } = recorder();
  try {
    await run(report);
  } catch (err) {
    if (!(err instanceof UnknownValueError)) throw err;
    outcome.cannotRun = err.message;
  }
  return outcome;
}

const notApplicable = (reason?: string): never => {
  throw new Error(`not applicable: ${reason}`);
};

/** The policy's look at the whole stack, at the end of a preview unless `run` says update. */
export function checkStack(
  policy: StackValidationPolicy,
  resources: PolicyResource[],
  config: object = {},
  run: "preview" | "update" = "preview",
): Promise<Outcome> {
  return during(run, () =>
    outcomeOf((report) =>
      policy.validateStack(
        { resources, stackTags: new Map(), getConfig: <T>() => config as T, notApplicable },
        report,
      ),
    ),
  );
}

/** The engine tells a pack whether its run is a preview in its environment (PULUMI_NODEJS_DRY_RUN). */
async function during<T>(run: "preview" | "update", check: () => Promise<T>): Promise<T> {
  const saved = process.env.PULUMI_NODEJS_DRY_RUN;
  process.env.PULUMI_NODEJS_DRY_RUN = String(run === "preview");
  try {
    return await check();
  } finally {
    if (saved === undefined) delete process.env.PULUMI_NODEJS_DRY_RUN;
    else process.env.PULUMI_NODEJS_DRY_RUN = saved;
  }
}

/** The policy's look at one resource's inputs, in an update unless `run` says preview. */
export function checkResource(
  policy: ResourceValidationPolicy,
  shown: PolicyResource,
  config: object = {},
  run: "preview" | "update" = "update",
): Promise<Outcome> {
  const args: ResourceValidationArgs = {
    type: shown.type,
    name: shown.name,
    urn: shown.urn,
    props: shown.props,
    opts: shown.opts,
    stackTags: new Map(),
    isType: () => false,
    asType: () => undefined,
    getConfig: <T>() => config as T,
    notApplicable,
  };
  const validations = [policy.validateResource ?? []].flat();
  return during(run, () =>
    outcomeOf(async (report) => {
      for (const validate of validations) await validate(args, report);
    }),
  );
}
