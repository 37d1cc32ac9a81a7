/**
 * The dynamic provider of a resource definition: what `@pulumi/pulumi`'s dynamic-provider server calls.
 * Everything here is the same for every resource; what differs lives in the definitions.
 */
import type * as pulumi from "@pulumi/pulumi";
import { autonamed, type Naming } from "./autoname";
import { checkInputs, RESOURCE_NAME_KEY, type CheckFailure } from "./check";
import { withCloudChecks } from "./cloud-checks";
import { assertSettingsWellFormed, configure, providerProcess, runOperation } from "./context";
import {
  checksOf,
  diffRules,
  inputNames,
  stateOutputs,
  storedInputs,
  withInputDefaults,
  type AnyResourceDefinition,
  type ResourceState,
} from "./define-resource";
import { diffInputs, type ResourceDiff } from "./diff";
import { failureCode } from "../failure-codes";
import { messageOf, reportingInitFailure } from "./errors";
import { plainJson } from "./plain-json";

/**
 * The property in which the engine carries the serialized provider
 * (docs/design/pulumi-machinery.md#the-stored-provider).
 */
const PROVIDER_KEY = "__provider";

export type DynamicProvider = Required<pulumi.dynamic.ResourceProvider>;

/**
 * Check: the autonamed input filled in (autoname.ts), each input against its own schema, then the
 * rules across inputs (those the inputs declare, then the definition's); no API call.
 */
export function checkResource(
  definition: AnyResourceDefinition,
  news: Record<string, unknown>,
  olds: Record<string, unknown> = {},
  secrets: ReadonlySet<string> = new Set(),
  naming: Naming = {},
): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const rule = definition.autoname;
  const rules = checksOf(definition);
  if (!rule) return checkInputs(definition.inputs, news, rules, olds, secrets);
  const { value, failure } = autonamed(rule, definition.name.toLowerCase(), news, olds, naming);
  const named = value === undefined ? news : { ...news, [rule.input]: value };
  const checked = checkInputs(definition.inputs, named, rules, olds, secrets);
  return failure ? { ...checked, failures: [...checked.failures, failure] } : checked;
}

/**
 * The definition's declared diff of stored outputs (which carry every input) against new inputs. The
 * definition learns of the state it met first (an Instance's pending create, for the create that follows).
 */
export function diffResource(
  definition: AnyResourceDefinition,
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): ResourceDiff {
  definition.diffed?.(providerProcess(), id, olds);
  // An input absent on either side is at its default: stored before the input existed, or not checked.
  const [before, after] = [withInputDefaults(definition, olds), withInputDefaults(definition, news)];
  return diffInputs(
    id,
    before,
    after,
    inputNames(definition),
    diffRules(definition),
    definition.update !== undefined,
  );
}

export function dynamicProvider(definition: AnyResourceDefinition): DynamicProvider {
  const outputs = (state: ResourceState<unknown, unknown>) => stateOutputs(definition, state);
  const inputs = (props: Record<string, unknown>) => storedInputs<Record<string, unknown>>(definition, props);
  return {
    async configure(req) {
      configure(req.config);
    },
    async check(olds, news) {
      assertSettingsWellFormed();
      const resourceName = news[RESOURCE_NAME_KEY];
      const checked = checkResource(definition, news, olds, new Set(), {
        resourceName: typeof resourceName === "string" ? resourceName : undefined,
      });
      return withCloudChecks(definition, checked, olds);
    },
    async diff(id, olds, news) {
      const { changes, replaces } = diffResource(definition, id, olds, news);
      return { changes, replaces, deleteBeforeReplace: false };
    },
    async create(props) {
      const created = await initFailureAsEngineError(definition, props, () =>
        runOperation((ctx) => definition.create(ctx, inputs(props))),
      );
      return { id: created.id, outs: outputs(created) };
    },
    async read(id, props) {
      const state = await withFailureCode(() =>
        runOperation((ctx) => definition.read(ctx, id, inputs(props), props)),
      );
      if (state === undefined) return { id: "", props: {} };
      return { id: state.id ?? id, props: outputs(state), inputs: plainJson(state.inputs) };
    },
    async update(id, olds, news) {
      const update = definition.update;
      // diffResource answers "replace" for every change of a definition without update.
      if (!update) throw new Error(`${definition.name} cannot be updated in place; it is replaced instead.`);
      const state = await initFailureAsEngineError(definition, news, () =>
        runOperation((ctx) => update(ctx, id, inputs(olds), inputs(news))),
      );
      return { outs: outputs(state) };
    },
    async delete(id, props) {
      await withFailureCode(() => runOperation((ctx) => definition.delete(ctx, id, inputs(props), props)));
    },
  };
}

/**
 * Runs a read or delete. Pulumi's dynamic-provider server hands what these throw to gRPC as it is, and
 * gRPC takes a numeric `code` for the status the engine reads (an SDK error's is the API's own: 503, -1,
 * 1), so the failure goes on with the code of the one table instead, its message and cause unchanged
 * (docs/failure-behaviour.md#what-the-engine-is-told). Create and update failures the server always
 * answers UNKNOWN.
 */
async function withFailureCode<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw Object.assign(new Error(messageOf(err), { cause: err }), { code: failureCode(err) });
  }
}

/**
 * Runs a create or update; a ResourceInitError becomes the error the dynamic-provider server packs
 * into ErrorResourceInitFailed (an Error with `id`, `properties` and `reasons`), with the provider
 * among the properties so the engine can still call it for that resource.
 */
function initFailureAsEngineError<T>(
  definition: AnyResourceDefinition,
  props: Record<string, unknown>,
  operation: () => Promise<T>,
): Promise<T> {
  return reportingInitFailure(operation, (err) =>
    Object.assign(new Error(err.message), {
      id: err.id,
      properties: { ...stateOutputs(definition, err.state), [PROVIDER_KEY]: props[PROVIDER_KEY] },
      reasons: err.reasons,
    }),
  );
}
