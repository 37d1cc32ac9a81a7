/** What an operation reports: its steps (one per resource, with the properties that change) and its result. */
import type { PolicyViolation } from "../policy-pack";
import type { ResourceRecord } from "../state";
import { isSecret, type Props } from "../wire";

export type Operation = "preview" | "up" | "refresh" | "destroy";
/** What happens (or happened) to one resource; a refresh reports drift as `update` and a gone resource as `delete`. */
export type Op = "create" | "update" | "replace" | "delete" | "same";

export interface PropertyChange {
  name: string;
  old?: unknown;
  new?: unknown;
  secret: boolean;
  /** This change is why the resource is replaced. */
  replaces: boolean;
}

export interface Step {
  op: Op;
  urn: string;
  type: string;
  name: string;
  id?: string;
  changes: PropertyChange[];
  /** The provider made the resource but could not finish it: why (it stays in the state with these). */
  initErrors?: string[];
}

export interface OperationResult {
  operation: Operation;
  steps: Step[];
  /** Stack outputs: secrets wrapped (see `isSecret`), preview unknowns as UNKNOWN. */
  outputs: Props;
  /**
   * What the stack's policy packs reported (`policyPacks`): advisory violations, as a preview or up that
   * succeeds has only those. Mandatory ones fail the operation (see OperationError). Empty for refresh and destroy.
   */
  policyViolations: PolicyViolation[];
  durationMs: number;
}

export function result(
  operation: Operation,
  steps: Step[],
  outputs: Props,
  started: number,
  policyViolations: PolicyViolation[],
): OperationResult {
  return { operation, steps, outputs, policyViolations, durationMs: Date.now() - started };
}

export function stepOf(op: Op, record: ResourceRecord): Step {
  return { op, urn: record.urn, type: record.type, name: record.name, id: record.id, changes: [] };
}

/** The properties whose value differs, old to new (absent and null are the same). */
export function changes(olds: Props, news: Props, secrets: string[], replaces: string[]): PropertyChange[] {
  const names = [...new Set([...Object.keys(olds), ...Object.keys(news)])].sort();
  return names
    .filter((name) => !same(olds[name], news[name]))
    .map((name) => ({
      name,
      old: olds[name],
      new: news[name],
      secret: secrets.includes(name) || isSecret(olds[name]) || isSecret(news[name]),
      replaces: replaces.includes(name),
    }));
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * A type as the Pulumi CLI shows it: `pulumi-nodejs:dynamic/gpucloud:Instance` and `gpucloud:index:Instance`
 * both as `gpucloud:Instance`.
 */
export function typeName(type: string): string {
  return type.replace(/^pulumi-nodejs:dynamic\//, "").replace(/^([^:]+):index:/, "$1:");
}
