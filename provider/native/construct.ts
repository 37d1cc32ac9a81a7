/**
 * Construct, the RPC through which the engine has a provider make a component resource for a program in any
 * language (Pulumi YAML's `type: gpucloud:index:Fleet`, a Python or Go SDK's Fleet class): the component's
 * own code runs here, against the engine's resource monitor, registering the component and its children
 * (the plugin's own resources, which the engine then has this plugin create) as a multi-language
 * component provider built on @pulumi/pulumi's `provider.main` does (docs/design/contracts.md#fleet).
 *
 * The runtime's program state is global to the process; each Construct gets a store of its own
 * (@pulumi/pulumi's `withLocalStorage`), so fleets constructed at once do not share it. The pieces of
 * @pulumi/pulumi's runtime it takes are those its own provider server uses, not all of them public.
 */
import * as grpc from "@grpc/grpc-js";
import * as pulumi from "@pulumi/pulumi";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { token } from "../tokens";
import { COMPONENTS } from "../components";
import { declareComponent } from "../components/declare";
import { pluginKit } from "../components/kits";
import type { AnyComponentDefinition } from "../framework/define-component";
import { InputsRefusedError, RpcError } from "./errors";

/** What Construct takes of @pulumi/pulumi's runtime beyond its public API (its provider server uses the same). */
interface RuntimeInternals {
  withLocalStorage<T>(run: () => Promise<T>): Promise<T>;
  awaitFeatureSupport(): Promise<void>;
  waitForRPCs(): Promise<void>;
  deserializeInputs(
    inputs: Struct | undefined,
    dependencies: ReturnType<provproto.ConstructRequest["getInputdependenciesMap"]>,
  ): Promise<pulumi.Inputs>;
}

function runtime(): RuntimeInternals {
  const state = require("@pulumi/pulumi/runtime/state") as Pick<RuntimeInternals, "withLocalStorage">;
  const settings = require("@pulumi/pulumi/runtime/settings") as Pick<
    RuntimeInternals,
    "awaitFeatureSupport" | "waitForRPCs"
  >;
  const server = require("@pulumi/pulumi/provider/server") as Pick<RuntimeInternals, "deserializeInputs">;
  return {
    withLocalStorage: state.withLocalStorage,
    awaitFeatureSupport: settings.awaitFeatureSupport,
    waitForRPCs: settings.waitForRPCs,
    deserializeInputs: server.deserializeInputs,
  };
}

/** A component as Construct makes it: its children are the plugin's resources. */
class ConstructedComponent extends pulumi.ComponentResource {
  private readonly definition: AnyComponentDefinition;

  constructor(
    definition: AnyComponentDefinition,
    name: string,
    inputs: pulumi.Inputs,
    opts: pulumi.ComponentResourceOptions,
  ) {
    super(token(definition.name), name, inputs, opts);
    this.definition = definition;
  }

  // Runs inside super(), before this class's own fields are set: the type names the definition.
  protected override initialize(args: pulumi.Inputs, _opts?: unknown, name?: string, type?: string) {
    return declareComponent(componentOf(type ?? ""), this, name ?? "", args, pluginKit, (outputs) =>
      this.registerOutputs(outputs),
    );
  }

  /** Settles once the children are declared, or rejects with the check's failure. */
  declared(): Promise<unknown> {
    return this.getData();
  }

  outputs(): pulumi.Inputs {
    const own = this as unknown as Record<string, pulumi.Input<unknown>>;
    return Object.fromEntries(Object.keys(this.definition.outputs).map((name) => [name, own[name]]));
  }
}

function componentOf(type: string): AnyComponentDefinition {
  const definition = COMPONENTS.find((d) => token(d.name) === type);
  if (!definition) {
    throw new RpcError(
      grpc.status.INVALID_ARGUMENT,
      `${type || "(no type)"} is not a component of this provider (components: ${COMPONENTS.map((d) => token(d.name)).join(", ")}).`,
    );
  }
  return definition;
}

/** The options the engine sends, as the component's own: its parent and what it depends on. */
function optionsOf(req: provproto.ConstructRequest): pulumi.ComponentResourceOptions {
  return {
    ...(req.getParent() ? { parent: new pulumi.DependencyResource(req.getParent()) } : {}),
    dependsOn: req.getDependenciesList().map((urn) => new pulumi.DependencyResource(urn)),
    protect: req.getProtect(),
  };
}

/** The Constructs under way, each failed by what its component's program leaves unhandled. */
const underWay = new Set<(reason: unknown) => void>();

/**
 * Pulumi's runtime leaves some failures of a component's program to the host's unhandled-rejection handler
 * (a child whose input came from a child that failed): Pulumi's language host and its own provider server
 * both install one. From the first Construct on, this plugin's fails the Constructs under way, and one that
 * comes after them is written to stderr (the engine's log): it never ends the plugin and the operations of
 * every other resource with it.
 */
function takeStrayRejections(): void {
  if (process.listeners("unhandledRejection").includes(failConstructs)) return;
  process.on("unhandledRejection", failConstructs);
}

function failConstructs(reason: unknown): void {
  if (underWay.size === 0) {
    process.stderr.write(
      `pulumi-resource-gpucloud: a component's program failed after its Construct ended: ${String(reason)}\n`,
    );
  }
  for (const fail of underWay) fail(reason);
}

/** `engineAddress` is where the runtime sends the component's log lines; without one they go to stderr. */
export function construct(
  req: provproto.ConstructRequest,
  engineAddress: string | undefined,
): Promise<provproto.ConstructResponse> {
  takeStrayRejections();
  return new Promise((resolve, reject) => {
    underWay.add(reject);
    constructed(req, engineAddress)
      .then(resolve, reject)
      .finally(() => underWay.delete(reject));
  });
}

function constructed(
  req: provproto.ConstructRequest,
  engineAddress: string | undefined,
): Promise<provproto.ConstructResponse> {
  const definition = componentOf(req.getType());
  const internals = runtime();
  return internals.withLocalStorage(async () => {
    pulumi.runtime.resetOptions(
      req.getProject(),
      req.getStack(),
      req.getParallel(),
      engineAddress ?? "",
      req.getMonitorendpoint(),
      req.getDryrun(),
      req.getOrganization(),
    );
    await internals.awaitFeatureSupport();
    pulumi.runtime.setAllConfig(
      Object.fromEntries(req.getConfigMap().entries()),
      req.getConfigsecretkeysList(),
    );
    const inputs = await internals.deserializeInputs(req.getInputs(), req.getInputdependenciesMap());
    const component = new ConstructedComponent(definition, req.getName(), inputs, optionsOf(req));
    await component.declared().catch((err: unknown) => {
      if (!pulumi.InputPropertiesError.isInstance(err)) throw err;
      throw new InputsRefusedError(err.message, err.errors);
    });
    const [state] = await pulumi.runtime.serializeResourceProperties(
      `construct(${req.getType()}, ${req.getName()})`,
      component.outputs(),
    );
    const urn = await new Promise<string>((resolve) => component.urn.apply(resolve));
    await internals.waitForRPCs();
    const res = new provproto.ConstructResponse();
    res.setUrn(urn);
    res.setState(Struct.fromJavaScript(state));
    return res;
  });
}
