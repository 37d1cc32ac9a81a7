/**
 * A component's body, the same wherever it runs (a program, or the native plugin's Construct): its inputs
 * checked as the engine would send them, then its children declared, then its outputs set on it and
 * registered. A check that fails declares nothing: nothing is sent that could cost money.
 */
import * as pulumi from "@pulumi/pulumi";
import {
  checkComponent,
  type AnyComponentDefinition,
  type ChildKit,
  type ComponentScope,
} from "../framework/define-component";
import { UNKNOWN } from "../framework/check";
import { PACKAGE } from "../tokens";
import { unwrapSecrets } from "../native/wire";

type Outputs = Record<string, pulumi.Input<unknown>>;

/**
 * Declares `component`'s children and sets its outputs on it at once (they settle once the children are
 * declared); `register` hands the outputs to the engine. Settles with the declared outputs, or rejects
 * with the check's InputPropertiesError: that rejection is the one report of the failure (a program fails
 * on it, Construct answers it), so the outputs of a component that declared nothing never settle, as a
 * failed resource's do not.
 */
export function declareComponent(
  definition: AnyComponentDefinition,
  component: pulumi.ComponentResource,
  name: string,
  given: pulumi.Inputs,
  kit: ChildKit,
  register: (outputs: Outputs) => void,
): Promise<Outputs> {
  const declared = checkedThenDeclared(definition, { component, name, kit }, given);
  const outputs = Object.fromEntries(
    Object.keys(definition.outputs).map((output) => [
      output,
      // Each output from its own value: one not known at preview leaves the others known.
      pulumi.output(declared.then((values) => values[output], never)),
    ]),
  );
  Object.assign(component, outputs);
  register(outputs);
  return declared;
}

function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}

async function checkedThenDeclared(
  definition: AnyComponentDefinition,
  scope: ComponentScope,
  given: pulumi.Inputs,
): Promise<Outputs> {
  // The wire form is what a resource's Check gets: preview unknowns as the engine's sentinel, secrets wrapped.
  const wire = await pulumi.runtime.serializeProperties(`${definition.name} ${scope.name}`, given);
  const { props, secrets } = unwrapSecrets(wire);
  const inputs = checked(definition, scope.name, props, secrets);
  return definition.declare(scope, inputs, given as Record<string, pulumi.Input<unknown>>);
}

/**
 * Refuses, before the component registers, the inputs a program gave as plain values (those given as
 * Outputs or promises count as unknown here; the check once they are known has them). The program's
 * constructor then throws, so the deployment fails there, before anything is sent.
 */
export function refuseKnownMistakes(definition: AnyComponentDefinition, name: string, given: object): void {
  const props = Object.fromEntries(
    Object.entries(given)
      .filter(([, value]) => value !== undefined)
      .map(([input, value]) => [input, knownNow(value) ? value : UNKNOWN]),
  );
  checked(definition, name, props, new Set());
}

/** A value the program wrote as it is: no Output or promise anywhere inside it. */
function knownNow(value: unknown): boolean {
  if (pulumi.Output.isInstance(value) || value instanceof Promise) return false;
  if (typeof value !== "object" || value === null) return true;
  return Object.values(value).every(knownNow);
}

/** The checked inputs, or the InputPropertiesError that names each input at fault and its rule. */
function checked(
  definition: AnyComponentDefinition,
  name: string,
  props: Record<string, unknown>,
  secrets: ReadonlySet<string>,
): Record<string, unknown> {
  const { inputs, failures } = checkComponent(definition, props, secrets);
  if (failures.length === 0) return inputs;
  throw new pulumi.InputPropertiesError({
    message:
      `${name} (${PACKAGE}:${definition.name}) failed its check: ` +
      failures.map((f) => `${f.property}: ${f.reason}`).join("; "),
    errors: failures.map((f) => ({ propertyPath: f.property, reason: f.reason })),
  });
}
