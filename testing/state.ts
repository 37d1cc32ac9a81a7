/**
 * The stack state the engine keeps between operations, like Pulumi's checkpoint: in memory, or in a JSON
 * file whose secret values are sealed with a passphrase (passphrase.ts) and never written in plain text.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Sealer, WrongPassphraseError, type SealedKey } from "./passphrase";
import { isSecret, secret, type Props } from "./wire";

export interface ResourceRecord {
  urn: string;
  /** The type token, e.g. `pulumi-nodejs:dynamic/gpucloud:Instance`. */
  type: string;
  name: string;
  id: string;
  /** The serialized provider (`__provider`) of a dynamic resource: destroy and refresh need it without the program. */
  provider?: string;
  /** The checked inputs, without `__provider`. */
  inputs: Props;
  /** The provider's outputs, without `__provider` (`current` wraps the secret ones, see secretOutputs). */
  outputs: Props;
  /** Names of the inputs and outputs that are secret (`additionalSecretOutputs` and secret inputs). */
  secretOutputs: string[];
  /** URNs of the resources this one depends on: destroy goes in the reverse order. */
  dependencies: string[];
  /** The URN of its parent (a component): destroy deletes children before their parent. */
  parent?: string;
  /** A component resource: no provider and no id; its outputs are those it registered. */
  component?: true;
  /**
   * Why the provider could not finish the resource it made (Pulumi's ErrorResourceInitFailed): the next `up`
   * updates (or replaces) it even when nothing changed; a `refresh` that reads it cleanly clears them.
   */
  initErrors?: string[];
}

export interface StackState {
  project: string;
  stack: string;
  resources: ResourceRecord[];
  /** The program's stack outputs (plain values inside the Stack; `current` wraps the secret ones). */
  outputs: Props;
  /** Stack output names whose value is (or holds) a secret. */
  secretOutputs: string[];
}

export function emptyState(project: string, stack: string): StackState {
  return { project, stack, resources: [], outputs: {}, secretOutputs: [] };
}

/** Where a stack's state lives between operations. */
export interface StateStore {
  load(project: string, stack: string): StackState;
  save(state: StackState): void;
}

/** State that lives as long as the Stack object: nothing is written anywhere. */
export class MemoryStore implements StateStore {
  load(project: string, stack: string): StackState {
    return emptyState(project, stack);
  }
  save(): void {}
}

const FILE_VERSION = 2;

/** The state file: the state with every secret value sealed, and what reopens them. */
interface StateFile extends StackState {
  version: typeof FILE_VERSION;
  secretsProvider: { type: "passphrase"; state: SealedKey };
}

/** A JSON state file; secret values are sealed with the passphrase. */
export class FileStore implements StateStore {
  private sealer?: Sealer;

  constructor(
    readonly file: string,
    private readonly passphrase: string,
  ) {}

  load(project: string, stack: string): StackState {
    if (!fs.existsSync(this.file)) {
      this.sealer = Sealer.create(this.passphrase);
      return emptyState(project, stack);
    }
    const saved = this.read();
    if (saved.project !== project || saved.stack !== stack) {
      throw new Error(
        `Could not open the state file ${this.file}: it belongs to the stack ${saved.project}/${saved.stack}, ` +
          `not ${project}/${stack}. Give this stack another state file.`,
      );
    }
    try {
      this.sealer = Sealer.open(this.passphrase, saved.secretsProvider.state);
    } catch (err) {
      if (!(err instanceof WrongPassphraseError)) throw err;
      throw new Error(
        `Could not open the state file ${this.file}: the passphrase does not open its secrets. ` +
          "Give the passphrase the file was written with.",
      );
    }
    return transformSecrets(saved, (sealed) => this.sealer!.open(sealedText(sealed, this.file)));
  }

  /** Writes through a temporary file, so a crash never leaves half a state behind. */
  save(state: StackState): void {
    const sealer = this.sealer!;
    const file: StateFile = {
      version: FILE_VERSION,
      ...transformSecrets(state, (value) => secret({ ciphertext: sealer.seal(value) })),
      secretsProvider: { type: "passphrase", state: sealer.sealedKey },
    };
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temporary, this.file);
  }

  private read(): StateFile {
    let saved: StateFile;
    try {
      saved = JSON.parse(fs.readFileSync(this.file, "utf8")) as StateFile;
    } catch (err) {
      throw new Error(`Could not read the state file ${this.file}: ${(err as Error).message}.`);
    }
    if (saved.version !== FILE_VERSION || saved.secretsProvider?.type !== "passphrase") {
      throw new Error(
        `Could not read the state file ${this.file}: it is not a state file of this version ` +
          `(version ${String(saved.version)}, expected ${FILE_VERSION}). Give this stack a new state file.`,
      );
    }
    return saved;
  }
}

/** The sealed text inside a secret of the state file. */
function sealedText(value: unknown, file: string): string {
  const inner = isSecret(value) ? value.value : undefined;
  const text = (inner as { ciphertext?: unknown } | undefined)?.ciphertext;
  if (typeof text !== "string")
    throw new Error(`Could not read the state file ${file}: a secret is damaged.`);
  return text;
}

/**
 * The state to hand to a user: a copy (changing it changes nothing), with every secret value wrapped
 * as the engine passes secrets, so printing it with `displayValue` never shows one.
 */
export function stateForUser(state: StackState): StackState {
  return transformSecrets(structuredClone(state), secret);
}

/** The state with `change` applied to every secret value: those named by secretOutputs, in records and outputs. */
function transformSecrets(state: StackState, change: (value: unknown) => unknown): StackState {
  const inProps = (props: Props, names: string[]): Props => {
    const out: Props = { ...props };
    for (const name of names) if (name in out) out[name] = change(out[name]);
    return out;
  };
  return {
    project: state.project,
    stack: state.stack,
    resources: state.resources.map((r) => ({
      ...r,
      inputs: inProps(r.inputs, r.secretOutputs),
      outputs: inProps(r.outputs, r.secretOutputs),
    })),
    outputs: inProps(state.outputs, state.secretOutputs),
    secretOutputs: state.secretOutputs,
  };
}

/**
 * Groups resources so that each group only depends on earlier groups (a child on its parent too):
 * creation order. Destroy walks the groups backwards, deleting each group's members in parallel.
 */
export function dependencyLevels(resources: ResourceRecord[]): ResourceRecord[][] {
  const byUrn = new Map(resources.map((r) => [r.urn, r]));
  const level = new Map<string, number>();
  const levelOf = (r: ResourceRecord, seen: Set<string>): number => {
    const known = level.get(r.urn);
    if (known !== undefined) return known;
    if (seen.has(r.urn)) throw new Error(`dependency cycle through ${r.urn}`);
    seen.add(r.urn);
    const deps = [...r.dependencies, ...(r.parent ? [r.parent] : [])]
      .map((u) => byUrn.get(u))
      .filter((d): d is ResourceRecord => d !== undefined);
    const value = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((d) => levelOf(d, seen)));
    level.set(r.urn, value);
    return value;
  };
  const levels: ResourceRecord[][] = [];
  for (const r of resources) (levels[levelOf(r, new Set())] ??= []).push(r);
  return levels.filter((l) => l !== undefined);
}
