/**
 * What the native plugin answers for a preview without calling the cloud (Create and Update with
 * `preview: true`), and which properties a diff may call stable: the inputs as given, and every output
 * that only the cloud will know as the engine's unknown.
 */
import { UNKNOWN } from "./check";
import { inputNames, stableOutputNames, type AnyResourceDefinition } from "./define-resource";
import type { ResourceDiff } from "./diff";

type Props = Record<string, unknown>;

/** A create's outputs before it runs: an output named like an input is that input, every other output unknown. */
export function previewCreate(definition: AnyResourceDefinition, inputs: Props): Props {
  const outputs = Object.keys(definition.outputs).map((name) => [name, inputs[name] ?? UNKNOWN]);
  return { ...inputs, ...Object.fromEntries(outputs) };
}

/**
 * An update's outputs before it runs (`olds` are the stored outputs): an output named like an input
 * follows it, a stable output keeps its value, every other output is unknown.
 */
export function previewUpdate(definition: AnyResourceDefinition, olds: Props, news: Props): Props {
  const stable = new Set(stableOutputNames(definition));
  const inputs = new Set(inputNames(definition));
  const outputs = Object.keys(definition.outputs).map((name) => {
    if (inputs.has(name)) return [name, news[name] ?? olds[name]];
    return [name, stable.has(name) ? olds[name] : UNKNOWN];
  });
  return { ...news, ...Object.fromEntries(outputs) };
}

/** The properties an in-place update leaves as they are: the unchanged inputs and the stable outputs. */
export function stableProperties(definition: AnyResourceDefinition, diff: ResourceDiff): string[] {
  if (diff.replaces.length > 0) return [];
  const unchanged = inputNames(definition).filter((name) => !(name in diff.properties));
  return [...new Set([...unchanged, ...stableOutputNames(definition)])];
}
