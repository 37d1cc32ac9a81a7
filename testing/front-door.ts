/**
 * The front door through which the engine reaches a provider. A program registers dynamic resources
 * (`pulumi-nodejs:dynamic/<module>:<Name>`, with their serialized provider in `__provider`); a front door
 * decides what the provider and the state see of them:
 * - the dynamic door hands them as they are to Pulumi's own dynamic-provider server;
 * - the native door hands them to a native provider plugin under the package's own tokens
 *   (`gpucloud:index:<Name>`), without `__provider`, with the stack config as the provider's properties;
 *   the program's components are the plugin's to construct (multi-language components), as they are for a
 *   program written against the plugin's SDK in any language.
 * The same program can so run through either door.
 */
import * as path from "node:path";
import { packageRoot } from "../provider/package-root";
import { DYNAMIC_TYPE_PREFIX, PACKAGE } from "../provider/tokens";
import {
  failureList,
  ProviderProcess,
  pulumiRoot,
  ResourceInitFailedError,
  type CheckResult,
  type ConstructCall,
  type ConstructResult,
  type CreateResult,
  type DiffResult,
  type ReadResult,
} from "./provider-process";
import { EngineLogServer, type EngineMessage } from "./engine-log";
import { nodeExitingWithEngine } from "./plugin-process";
import { reveal, type Props } from "./wire";

const PROVIDER_KEY = "__provider";

/** A resource as the provider behind a front door knows it. */
export interface ResourceRef {
  urn: string;
  type: string;
  /** The serialized provider of a dynamic resource. */
  provider?: string;
}

/** A registration of the program, as a front door admits it. */
export interface Admitted {
  /** The type token the provider and the state use. */
  type: string;
  provider?: string;
  /** The inputs without `__provider`. */
  inputs: Props;
}

export interface FrontDoor {
  /** What the provider will see of a resource the program registered; throws for one this door cannot serve. */
  admit(registration: { urn: string; type: string; inputs: Props }): Admitted;
  /** The type token the state keeps for a type the program registers. */
  stateType(programType: string): string;
  /** Configures the provider with the stack config (fully qualified keys; secrets wrapped). */
  configure(config: Props): Promise<void>;
  check(resource: ResourceRef, olds: Props, news: Props): Promise<CheckResult>;
  diff(resource: ResourceRef, id: string, olds: Props, news: Props): Promise<DiffResult>;
  create(resource: ResourceRef, inputs: Props): Promise<CreateResult>;
  read(resource: ResourceRef, id: string, outputs: Props, inputs: Props): Promise<ReadResult>;
  update(resource: ResourceRef, id: string, olds: Props, news: Props): Promise<Props>;
  delete(resource: ResourceRef, id: string, outputs: Props): Promise<void>;
  /**
   * Present where the provider constructs components (Construct): the program's components then register
   * as remote ones, and the engine has the provider make each with its children.
   */
  construct?(call: ConstructCall): Promise<ConstructResult>;
  /** What the provider process wrote to stderr so far. */
  readonly stderr: string;
  /**
   * What the provider sent to the engine's log so far: its warnings and the progress of its waits, each
   * naming its resource. Pulumi's dynamic-provider server never dials the engine, so through the dynamic
   * door this stays empty and the provider writes to stderr instead.
   */
  readonly engineMessages: readonly EngineMessage[];
  close(): Promise<void>;
}

/** Where and how the engine starts a front door's provider process. */
export interface FrontDoorContext {
  /** The program's folder: a dynamic resource's stored provider resolves its `require`s from here. */
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Opens a front door for a stack; `Stack.open` takes one as `frontDoor`. */
export type FrontDoorFactory = (context: FrontDoorContext) => Promise<FrontDoor>;

/**
 * Pulumi's dynamic-provider server from @pulumi/pulumi. It takes one argument, an engine address that it
 * never dials.
 */
export function startDynamicProviderServer({ cwd, env }: FrontDoorContext): Promise<ProviderProcess> {
  const server = path.join(pulumiRoot(), "cmd", "dynamic-provider", "index.js");
  return ProviderProcess.start({
    description: "the dynamic-provider server",
    ...nodeExitingWithEngine(server, ["127.0.0.1:1"]),
    cwd,
    env,
  });
}

/** Every resource through Pulumi's dynamic-provider server, as the Pulumi CLI runs dynamic providers. */
export function dynamicFrontDoor(): FrontDoorFactory {
  return async (context) => new DynamicFrontDoor(await startDynamicProviderServer(context));
}

function withProvider(props: Props, provider: string | undefined): Props {
  return provider === undefined ? props : { ...props, [PROVIDER_KEY]: provider };
}

export function withoutProvider(props: Props): Props {
  const { [PROVIDER_KEY]: _provider, ...rest } = props;
  return rest;
}

/**
 * The server reports acceptSecrets=false, so the engine unwraps secrets before every resource call;
 * undefined is dropped, as the engine never sends it.
 */
function toServer(props: Props, provider: string | undefined): Props {
  return reveal(withProvider(props, provider)) as Props;
}

/** The outputs of a resource the server made but could not finish come with `__provider` too. */
function initFailureWithoutProvider(err: unknown): never {
  if (!(err instanceof ResourceInitFailedError)) throw err;
  throw new ResourceInitFailedError(err.message, err.id, withoutProvider(err.outputs), err.reasons, {
    cause: err.cause,
  });
}

class DynamicFrontDoor implements FrontDoor {
  constructor(private readonly server: ProviderProcess) {}

  admit(registration: { urn: string; type: string; inputs: Props }): Admitted {
    if (!registration.type.startsWith(DYNAMIC_TYPE_PREFIX)) {
      throw new Error(`${registration.urn}: the dynamic front door serves dynamic resources only.`);
    }
    const provider = registration.inputs[PROVIDER_KEY];
    if (typeof provider !== "string")
      throw new Error(`${registration.urn} was registered without ${PROVIDER_KEY}.`);
    return { type: registration.type, provider, inputs: withoutProvider(registration.inputs) };
  }

  stateType(programType: string): string {
    return programType;
  }

  async configure(config: Props): Promise<void> {
    // Configure receives the whole stack config with fully qualified keys, secrets wrapped.
    await this.server.configure(config);
  }

  async check(r: ResourceRef, olds: Props, news: Props): Promise<CheckResult> {
    const oldProps = Object.keys(olds).length > 0 ? toServer(olds, r.provider) : {};
    const result = await this.server.check(r.urn, oldProps, toServer(news, r.provider));
    return { ...result, inputs: withoutProvider(result.inputs) };
  }

  diff(r: ResourceRef, id: string, olds: Props, news: Props): Promise<DiffResult> {
    return this.server.diff(r.urn, id, toServer(olds, r.provider), toServer(news, r.provider));
  }

  async create(r: ResourceRef, inputs: Props): Promise<CreateResult> {
    const created = await this.server
      .create(r.urn, toServer(inputs, r.provider))
      .catch(initFailureWithoutProvider);
    return { id: created.id, outputs: withoutProvider(created.outputs) };
  }

  async read(r: ResourceRef, id: string, outputs: Props, inputs: Props): Promise<ReadResult> {
    const read = await this.server.read(
      r.urn,
      id,
      toServer(outputs, r.provider),
      toServer(inputs, r.provider),
    );
    return {
      id: read.id,
      outputs: withoutProvider(read.outputs),
      inputs: read.inputs ? withoutProvider(read.inputs) : undefined,
    };
  }

  async update(r: ResourceRef, id: string, olds: Props, news: Props): Promise<Props> {
    const updated = await this.server
      .update(r.urn, id, toServer(olds, r.provider), toServer(news, r.provider))
      .catch(initFailureWithoutProvider);
    return withoutProvider(updated);
  }

  delete(r: ResourceRef, id: string, outputs: Props): Promise<void> {
    return this.server.delete(r.urn, id, toServer(outputs, r.provider));
  }

  get stderr(): string {
    return this.server.stderr;
  }

  get engineMessages(): readonly EngineMessage[] {
    return [];
  }

  close(): Promise<void> {
    return this.server.stop();
  }
}

export interface NativeFrontDoorOptions {
  /** The plugin's package name: `gpucloud`, whose resources are `gpucloud:index:<Name>`. */
  package: string;
  /** The plugin executable and its arguments; it prints its port as its first stdout line. */
  command: string;
  args?: string[];
}

/** This package's own plugin, `pulumi-resource-gpucloud`, as the Pulumi engine starts it. */
export function gpucloudPlugin(): NativeFrontDoorOptions {
  return {
    package: PACKAGE,
    command: process.execPath,
    args: [path.join(packageRoot(), "dist", "provider", "native", "main.js")],
  };
}

/** `pulumi-nodejs:dynamic/gpucloud:Instance` -> `gpucloud:index:Instance`; undefined for another package's type. */
export function nativeType(dynamicType: string, pkg: string): string | undefined {
  const prefix = `${DYNAMIC_TYPE_PREFIX}${pkg}:`;
  if (!dynamicType.startsWith(prefix)) return undefined;
  return `${pkg}:index:${dynamicType.slice(prefix.length)}`;
}

/**
 * The stack config as a native provider's properties, as the Pulumi engine builds the default provider:
 * the package's keys without their prefix (`gpucloud:apiKey` -> `apiKey`), secrets kept wrapped, and the same
 * values as the older `variables` map (`gpucloud:config:apiKey`), unwrapped.
 */
export function providerConfig(
  config: Props,
  pkg: string,
): { args: Props; variables: Record<string, string> } {
  const args: Props = {};
  const variables: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (!key.startsWith(`${pkg}:`)) continue;
    const name = key.slice(pkg.length + 1);
    args[name] = value;
    const plain = reveal(value);
    variables[`${pkg}:config:${name}`] = typeof plain === "string" ? plain : JSON.stringify(plain);
  }
  return { args, variables };
}

/**
 * Every resource of `package` through a native provider plugin: by default this package's own, so that a
 * program's resources take the path they take from Pulumi YAML, Python, Go or .NET. Configure announces acceptSecrets, so
 * secrets travel wrapped when the plugin accepts them and unwrapped otherwise, as the engine does; the
 * plugin marks secret outputs by wrapping them, and the engine records those names as secret. The plugin
 * gets the address of a stand-in for the engine's log as its last argument, as the engine passes its own.
 */
export function nativeFrontDoor(options: NativeFrontDoorOptions = gpucloudPlugin()): FrontDoorFactory {
  return async ({ cwd, env }) => {
    const log = await EngineLogServer.start();
    try {
      const plugin = await ProviderProcess.start({
        description: `the ${options.package} provider plugin`,
        command: options.command,
        args: [...(options.args ?? []), log.address],
        cwd,
        env,
      });
      return new NativeFrontDoor(plugin, options.package, log);
    } catch (err) {
      log.close();
      throw err;
    }
  };
}

class NativeFrontDoor implements FrontDoor {
  private acceptSecrets = false;

  constructor(
    private readonly plugin: ProviderProcess,
    private readonly pkg: string,
    private readonly log: EngineLogServer,
  ) {}

  admit(registration: { urn: string; type: string; inputs: Props }): Admitted {
    const type = this.stateType(registration.type);
    if (!type.startsWith(`${this.pkg}:`)) {
      throw new Error(
        `${registration.urn}: the ${this.pkg} provider plugin serves ${this.pkg} resources only, not ${registration.type}.`,
      );
    }
    return { type, inputs: withoutProvider(registration.inputs) };
  }

  /** A dynamic resource's type as the plugin's; the plugin's own (a component's children) as it is. */
  stateType(programType: string): string {
    return nativeType(programType, this.pkg) ?? programType;
  }

  construct(call: ConstructCall): Promise<ConstructResult> {
    return this.plugin.construct(call);
  }

  async configure(config: Props): Promise<void> {
    const { args, variables } = providerConfig(config, this.pkg);
    const urn = `urn:pulumi:stack::project::pulumi:providers:${this.pkg}::default`;
    // Before Configure the engine cannot know whether the plugin accepts secrets: it sends them wrapped.
    const checked = await this.plugin.checkConfig(urn, {}, args);
    if (checked && checked.failures.length > 0) {
      throw new Error(`The ${this.pkg} provider refused its configuration: ${failureList(checked.failures)}`);
    }
    const configured = await this.plugin.configure(checked?.inputs ?? args, variables);
    this.acceptSecrets = configured.acceptSecrets;
  }

  private wire(props: Props): Props {
    return this.acceptSecrets ? props : (reveal(props) as Props);
  }

  check(r: ResourceRef, olds: Props, news: Props): Promise<CheckResult> {
    return this.plugin.check(r.urn, this.wire(olds), this.wire(news));
  }

  diff(r: ResourceRef, id: string, olds: Props, news: Props): Promise<DiffResult> {
    return this.plugin.diff(r.urn, id, this.wire(olds), this.wire(news));
  }

  create(r: ResourceRef, inputs: Props): Promise<CreateResult> {
    return this.plugin.create(r.urn, this.wire(inputs));
  }

  read(r: ResourceRef, id: string, outputs: Props, inputs: Props): Promise<ReadResult> {
    return this.plugin.read(r.urn, id, this.wire(outputs), this.wire(inputs));
  }

  update(r: ResourceRef, id: string, olds: Props, news: Props): Promise<Props> {
    return this.plugin.update(r.urn, id, this.wire(olds), this.wire(news));
  }

  delete(r: ResourceRef, id: string, outputs: Props): Promise<void> {
    return this.plugin.delete(r.urn, id, this.wire(outputs));
  }

  get stderr(): string {
    return this.plugin.stderr;
  }

  get engineMessages(): readonly EngineMessage[] {
    return this.log.messages;
  }

  async close(): Promise<void> {
    await this.plugin.stop();
    this.log.close();
  }
}
