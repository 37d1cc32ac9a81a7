/**
 * A remote component: its provider's Construct makes it, registering the component and its children with
 * the engine's resource monitor, each child planned and applied as a program's resource is. A failure of
 * what it registered is the component's failure.
 */
import type { FrontDoor } from "../front-door";
import { secretKeys, stringConfig, urnOf, type Registration, type Resolution } from "../program";
import { InputPropertiesFailedError } from "../provider-process";
import { deploymentStopped, type ResourceMonitor } from "../resource-monitor";
import type { Props } from "../wire";
import { CheckFailedError } from "./errors";
import { typeName } from "./steps";

/** What a Construct works in: the deployment it registers into. */
export interface ConstructScope {
  door: FrontDoor;
  project: string;
  stack: string;
  config: Props;
  dryRun: boolean;
  /** The engine's resource monitor, started at the first component. */
  monitor(): Promise<ResourceMonitor>;
  /** One child, planned and applied as a program's resource. */
  register(child: Registration): Promise<Resolution>;
  registerOutputs(urn: string, outputs: Props): void;
  /** Failures of what this deployment's Constructs registered: the first is why its component failed. */
  failures: Error[];
}

export async function construct(scope: ConstructScope, registration: Registration): Promise<Resolution> {
  const { door, project, stack, config, failures } = scope;
  const { construct } = door;
  if (!construct) {
    throw new Error(
      `${registration.name} (${typeName(registration.type)}) is a component for a provider plugin to construct, ` +
        "and Pulumi's dynamic-provider server constructs none: open the stack with frontDoor: nativeFrontDoor().",
    );
  }
  const monitor = await scope.monitor();
  const failedBefore = failures.length;
  monitor.serve({
    urnOf: (type, name, parent) => urnOf({ project, stack }, type, name, parent),
    register: (child) => registerChild(scope, child),
    registerOutputs: (urn, outputs) => scope.registerOutputs(urn, outputs),
  });
  try {
    const made = await construct.call(door, {
      project,
      stack,
      config: stringConfig(config),
      configSecretKeys: secretKeys(config),
      dryRun: scope.dryRun,
      monitorEndpoint: monitor.endpoint,
      type: registration.type,
      name: registration.name,
      ...(registration.parent ? { parent: registration.parent } : {}),
      inputs: registration.inputs,
      dependencies: registration.dependencies,
    });
    return { outputs: made.state };
  } catch (err) {
    const cause = failures[failedBefore];
    if (cause) throw cause;
    if (err instanceof InputPropertiesFailedError) {
      throw new CheckFailedError(registration.name, registration.type, err.failures);
    }
    throw new Error(
      `construct of ${registration.name} (${typeName(registration.type)}) failed: ${(err as Error).message}`,
    );
  }
}

/** A child a Construct registered: after a failure, nothing new starts, as for a program's resources. */
async function registerChild(scope: ConstructScope, child: Registration): Promise<Resolution> {
  if (scope.failures.length > 0) throw deploymentStopped();
  try {
    return await scope.register(child);
  } catch (err) {
    scope.failures.push(err as Error);
    throw err;
  }
}
