/**
 * What every generated component class (provider/generated/resources.ts) hands to pulumi.ComponentResource,
 * and how it declares its children. In a program it declares them itself, as dynamic resources; where its
 * package is the native plugin's (the harness's native door), it registers as a remote component, whose
 * children the engine has the plugin's Construct declare (docs/design/contracts.md#fleet).
 */
import type * as pulumi from "@pulumi/pulumi";
import { token } from "./tokens";
import { componentDefinitionOf, type ComponentKind } from "./components";
import { declareComponent, refuseKnownMistakes } from "./components/declare";
import { programKit } from "./components/kits";
import { componentsConstructedByPlugin } from "./program-environment";

function definition(kind: ComponentKind) {
  const found = componentDefinitionOf(kind);
  if (!found) throw new Error(`no component named ${kind}`);
  return found;
}

export function componentArguments(
  kind: ComponentKind,
  name: string,
  args: object,
  opts: pulumi.ComponentResourceOptions | undefined,
): ConstructorParameters<typeof pulumi.ComponentResource> {
  const remote = componentsConstructedByPlugin();
  // A remote component is checked by its provider's Construct, as a program in another language has it.
  if (!remote) refuseKnownMistakes(definition(kind), name, args);
  // A remote component's outputs come back in the engine's answer: they are registered unset, so they resolve.
  const outputs = remote ? Object.keys(definition(kind).outputs).map((name) => [name, undefined]) : [];
  return [token(kind), name, { ...Object.fromEntries(outputs), ...args }, opts, remote];
}

/** The children declared in this program (a local component's `initialize`); `register` is its registerOutputs. */
export function initializeComponent(
  kind: ComponentKind,
  component: pulumi.ComponentResource,
  args: pulumi.Inputs,
  name: string,
  register: (outputs: pulumi.Inputs) => void,
): Promise<unknown> {
  return declareComponent(definition(kind), component, name, args, programKit, register);
}
