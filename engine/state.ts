/**
 * The stack state the engine keeps between operations: a JSON file, like Pulumi's checkpoint without the
 * encryption. Secret values stay in the file in plain text (it lives in a temporary folder of the demo or
 * a test) but are listed as secret, so every display masks them.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Props } from "./server";

export interface ResourceRecord {
  urn: string;
  /** The type token, e.g. `pulumi-nodejs:dynamic/gpucloud:Instance`. */
  type: string;
  name: string;
  id: string;
  /** The serialized provider (`__provider`); destroy and refresh need it without the program. */
  provider: string;
  /** The checked inputs, without `__provider`. */
  inputs: Props;
  /** The provider's outputs, without `__provider`. */
  outputs: Props;
  /** Output names that are secret (`additionalSecretOutputs` and secret inputs). */
  secretOutputs: string[];
  /** URNs of the resources this one depends on: destroy goes in the reverse order. */
  dependencies: string[];
}

export interface StackState {
  version: 1;
  project: string;
  stack: string;
  resources: ResourceRecord[];
  /** The program's stack outputs, plain values. */
  outputs: Props;
  /** Stack output names whose value is (or holds) a secret. */
  secretOutputs: string[];
}

export function emptyState(project: string, stack: string): StackState {
  return { version: 1, project, stack, resources: [], outputs: {}, secretOutputs: [] };
}

export function loadState(file: string, project: string, stack: string): StackState {
  if (!fs.existsSync(file)) return emptyState(project, stack);
  const state = JSON.parse(fs.readFileSync(file, "utf8")) as StackState;
  if (state.version !== 1 || state.project !== project || state.stack !== stack) {
    throw new Error(
      `The state file ${file} belongs to ${state.project}/${state.stack} (version ${state.version}), not ${project}/${stack}. ` +
        "Point the engine at another state file.",
    );
  }
  return state;
}

/** Writes through a temporary file so a crash never leaves half a state behind. */
export function saveState(file: string, state: StackState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temporary, file);
}

/**
 * Groups resources so that each group only depends on earlier groups: creation order. Destroy walks the
 * groups backwards, deleting each group's members in parallel.
 */
export function dependencyLevels(resources: ResourceRecord[]): ResourceRecord[][] {
  const byUrn = new Map(resources.map((r) => [r.urn, r]));
  const level = new Map<string, number>();
  const levelOf = (r: ResourceRecord, seen: Set<string>): number => {
    const known = level.get(r.urn);
    if (known !== undefined) return known;
    if (seen.has(r.urn)) throw new Error(`dependency cycle through ${r.urn}`);
    seen.add(r.urn);
    const deps = r.dependencies.map((u) => byUrn.get(u)).filter((d): d is ResourceRecord => d !== undefined);
    const value = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((d) => levelOf(d, seen)));
    level.set(r.urn, value);
    return value;
  };
  const levels: ResourceRecord[][] = [];
  for (const r of resources) (levels[levelOf(r, new Set())] ??= []).push(r);
  return levels.filter((l) => l !== undefined);
}
