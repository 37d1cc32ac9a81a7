/**
 * The resource RPCs of the native plugin (Check, Diff, Create, Read, Update, Delete), the same for every
 * resource: what differs lives in the definitions, as for the dynamic providers
 * (../framework/dynamic-provider.ts). Nothing of the plugin's code goes into state: the properties are
 * the definition's inputs and outputs alone.
 */
import { status } from "@grpc/grpc-js";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { token } from "../tokens";
import type { Naming } from "../framework/autoname";
import { runOperation } from "../framework/context";
import {
  secretOutputNames,
  stateOutputs,
  storedInputs,
  type AnyResourceDefinition,
  type ResourceState,
} from "../framework/define-resource";
import { withCloudChecks } from "../framework/cloud-checks";
import { checkResource, diffResource } from "../framework/dynamic-provider";
import { reportingInitFailure } from "../framework/errors";
import { previewCreate, previewUpdate, stableProperties } from "../framework/preview";
import { InitFailedError, RpcError } from "./errors";
import { checkFailure, detailedDiff } from "./answers";
import { unwrap, wrap, type Props } from "./wire";

interface TypedRequest {
  getUrn(): string;
  getType(): string;
}

/** The resource type of a request: its `type`, or (from an older engine) the last part of its URN's type. */
function resourceType(req: TypedRequest): string {
  if (req.getType()) return req.getType();
  const qualified = req.getUrn().split("::")[2] ?? "";
  return qualified.split("$").at(-1) ?? "";
}

/** The resource's name (the last part of its URN), the engine's random seed and autonaming configuration. */
function naming(req: provproto.CheckRequest): Naming {
  const resourceName = req.getUrn().split("::").slice(3).join("::") || undefined;
  const autonaming = req.getAutonaming();
  const modes = provproto.CheckRequest.AutonamingOptions.Mode;
  const mode =
    autonaming === undefined
      ? undefined
      : ({ [modes.PROPOSE]: "propose", [modes.ENFORCE]: "enforce", [modes.DISABLE]: "disable" } as const)[
          autonaming.getMode()
        ];
  return {
    resourceName,
    seed: req.getRandomseed_asU8(),
    engine: mode && autonaming ? { mode, proposedName: autonaming.getProposedName() } : undefined,
  };
}

export class ResourceRpcs {
  private readonly byToken: Map<string, AnyResourceDefinition>;

  constructor(definitions: readonly AnyResourceDefinition[]) {
    this.byToken = new Map(definitions.map((d) => [token(d.name), d]));
  }

  private definition(req: TypedRequest): AnyResourceDefinition {
    const type = resourceType(req);
    const definition = this.byToken.get(type);
    if (!definition && type === "") {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `The request names no resource type (its type and URN are empty); resources: ${[...this.byToken.keys()].join(", ")}.`,
      );
    }
    if (!definition) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `${type} is not a resource of this provider (resources: ${[...this.byToken.keys()].join(", ")}).`,
      );
    }
    return definition;
  }

  async check(req: provproto.CheckRequest): Promise<provproto.CheckResponse> {
    const { props: news, secrets } = unwrap(req.getNews());
    const olds = unwrap(req.getOlds()).props;
    const definition = this.definition(req);
    const checked = checkResource(definition, news, olds, secrets, naming(req));
    const { inputs, failures } = await withCloudChecks(definition, checked, olds, secrets);
    const res = new provproto.CheckResponse();
    res.setInputs(wrap(inputs, secrets));
    res.setFailuresList(failures.map((f) => checkFailure(f.property, f.reason)));
    return res;
  }

  diff(req: provproto.DiffRequest): provproto.DiffResponse {
    const definition = this.definition(req);
    const diff = diffResource(
      definition,
      req.getId(),
      unwrap(req.getOlds()).props,
      unwrap(req.getNews()).props,
    );
    const res = new provproto.DiffResponse();
    const changes = provproto.DiffResponse.DiffChanges;
    res.setChanges(diff.changes ? changes.DIFF_SOME : changes.DIFF_NONE);
    res.setDiffsList(Object.keys(diff.properties));
    res.setReplacesList(diff.replaces);
    res.setStablesList(stableProperties(definition, diff));
    res.setDeletebeforereplace(false);
    detailedDiff(res, diff.properties);
    return res;
  }

  /** `signal`: aborted by the plugin's Cancel (server.ts); every operation hands it to its waits. */
  async create(req: provproto.CreateRequest, signal?: AbortSignal): Promise<provproto.CreateResponse> {
    const definition = this.definition(req);
    const { props, secrets } = unwrap(req.getProperties());
    const hidden = [...secrets, ...secretOutputNames(definition)];
    const res = new provproto.CreateResponse();
    if (req.getPreview()) {
      res.setProperties(wrap(previewCreate(definition, props), hidden));
      return res;
    }
    const created = await initFailureReported(definition, hidden, () =>
      runOperation((ctx) => definition.create(ctx, storedInputs(definition, props)), signal),
    );
    res.setId(created.id);
    res.setProperties(wrap(stateOutputs(definition, created), hidden));
    return res;
  }

  /**
   * With neither properties nor inputs it is `pulumi import` or `get`: inputs and outputs from the cloud
   * alone. Otherwise a refresh: the stored outputs carry every input; a create the engine recorded as
   * pending (`pulumi refresh --import-pending-creates`) has the program's inputs alone.
   */
  async read(req: provproto.ReadRequest, signal?: AbortSignal): Promise<provproto.ReadResponse> {
    const definition = this.definition(req);
    const stored = unwrap(req.getProperties());
    const inputs = unwrap(req.getInputs());
    const importing = Object.keys(stored.props).length === 0 && Object.keys(inputs.props).length === 0;
    const id = req.getId();
    const olds = {
      ...storedInputs<Props>(definition, inputs.props),
      ...storedInputs<Props>(definition, stored.props),
    };
    const state = await runOperation(
      (ctx) => (importing ? definition.import(ctx, id) : definition.read(ctx, id, olds, stored.props)),
      signal,
    );
    const res = new provproto.ReadResponse();
    if (state === undefined) return res;
    const secrets = [...stored.secrets, ...inputs.secrets];
    // A pending create resolved to the instance it made: the engine stores the id Read returns.
    res.setId((state as { id?: string }).id ?? id);
    res.setProperties(wrap(stateOutputs(definition, state), [...secrets, ...secretOutputNames(definition)]));
    res.setInputs(wrap(state.inputs as Props, secrets));
    return res;
  }

  async update(req: provproto.UpdateRequest, signal?: AbortSignal): Promise<provproto.UpdateResponse> {
    const definition = this.definition(req);
    const olds = unwrap(req.getOlds()).props;
    const { props: news, secrets } = unwrap(req.getNews());
    const hidden = [...secrets, ...secretOutputNames(definition)];
    const res = new provproto.UpdateResponse();
    if (req.getPreview()) {
      res.setProperties(wrap(previewUpdate(definition, olds, news), hidden));
      return res;
    }
    const update = definition.update;
    // Diff answers "replace" for every change of a definition without update.
    if (!update)
      throw new RpcError(status.FAILED_PRECONDITION, `${definition.name} cannot be updated in place.`);
    const state = await initFailureReported(definition, hidden, () =>
      runOperation(
        (ctx) => update(ctx, req.getId(), storedInputs(definition, olds), storedInputs(definition, news)),
        signal,
      ),
    );
    res.setProperties(wrap(stateOutputs(definition, state), hidden));
    return res;
  }

  async delete(req: provproto.DeleteRequest, signal?: AbortSignal): Promise<void> {
    const definition = this.definition(req);
    const props = unwrap(req.getProperties()).props;
    await runOperation(
      (ctx) => definition.delete(ctx, req.getId(), storedInputs(definition, props), props),
      signal,
    );
  }
}

/** Runs a create or update; a ResourceInitError becomes ErrorResourceInitFailed with the resource's id and outputs. */
function initFailureReported<T>(
  definition: AnyResourceDefinition,
  secrets: string[],
  operation: () => Promise<T>,
): Promise<T> {
  return reportingInitFailure(operation, (err) => {
    const state = err.state as ResourceState<Props, unknown>;
    return new InitFailedError(
      err.message,
      err.id,
      wrap(stateOutputs(definition, state), secrets),
      wrap(state.inputs, secrets),
      err.reasons,
    );
  });
}
