/** How the demo prints plans, drift and outputs: close to what the Pulumi CLI shows. */
import {
  displayValue,
  typeName,
  type Op,
  type OperationResult,
  type PropertyChange,
  type Step,
} from "../testing";
import { terminalSafe, terminalSafeJson } from "../sdk";

const SYMBOL: Record<Op, string> = { create: "+", update: "~", replace: "+-", delete: "-", same: " " };

/** Verbs for the summary line of each operation ("6 to create" in a preview, "6 created" after up). */
const PLANNED: Record<Op, string> = {
  create: "to create",
  update: "to update",
  replace: "to replace",
  delete: "to delete",
  same: "unchanged",
};
const DONE: Record<Op, string> = {
  create: "created",
  update: "updated",
  replace: "replaced",
  delete: "deleted",
  same: "unchanged",
};

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  op(op: Op, text: string): string;
}

const COLOUR: Record<Op, number> = { create: 32, update: 33, replace: 35, delete: 31, same: 0 };

export function style(colour: boolean): Style {
  const wrap = (code: number, text: string) => (colour && code ? `\x1b[${code}m${text}\x1b[0m` : text);
  return {
    bold: (t) => wrap(1, t),
    dim: (t) => wrap(2, t),
    op: (op, t) => wrap(COLOUR[op], t),
  };
}

/** A value as JSON; the cloud's text in it (a title, a service's name) is shown, never obeyed, by a terminal. */
export function formatValue(value: unknown): string {
  return value === undefined ? "undefined" : terminalSafeJson(displayValue(value));
}

function formatChange(change: PropertyChange): string {
  const show = (v: unknown) => (change.secret ? "[secret]" : v === undefined ? "(none)" : formatValue(v));
  const why = change.replaces ? " (forces replacement)" : "";
  return `${change.name}: ${show(change.old)} => ${show(change.new)}${why}`;
}

/** One line per resource in a table, plus one indented line per changed property. */
export function planLines(result: OperationResult, s: Style, showSame = false): string[] {
  const steps = result.steps.filter((step) => showSame || step.op !== "same");
  const typeWidth = Math.max(4, ...steps.map((step) => typeName(step.type).length));
  const nameWidth = Math.max(4, ...steps.map((step) => step.name.length));
  const lines = [
    s.dim(`     ${"Type".padEnd(typeWidth)}  ${"Name".padEnd(nameWidth)}  ${planColumn(result)}`),
  ];
  for (const step of steps) {
    const verb =
      result.operation === "refresh"
        ? refreshVerb(step)
        : result.operation === "preview"
          ? step.op
          : DONE[step.op];
    const diff =
      step.changes.length > 0 ? s.dim(`  [diff: ${step.changes.map((c) => `~${c.name}`).join(" ")}]`) : "";
    lines.push(
      s.op(
        step.op,
        ` ${SYMBOL[step.op].padEnd(3)} ${typeName(step.type).padEnd(typeWidth)}  ${step.name.padEnd(nameWidth)}  ${verb}`,
      ) + diff,
    );
    for (const change of step.changes) lines.push(s.op(step.op, `       ~ ${formatChange(change)}`));
  }
  return lines;
}

function planColumn(result: OperationResult): string {
  return result.operation === "preview" ? "Plan" : result.operation === "refresh" ? "Refresh" : "Status";
}

function refreshVerb(step: Step): string {
  if (step.op === "update") return "drifted";
  if (step.op === "delete") return "gone";
  return "in sync";
}

/** `Resources: + 6 to create` / `~ 2 updated, 4 unchanged`. */
export function countsLine(result: OperationResult, s: Style): string {
  const verbs = result.operation === "preview" ? PLANNED : DONE;
  const counts = new Map<Op, number>();
  for (const step of result.steps) counts.set(step.op, (counts.get(step.op) ?? 0) + 1);
  const parts = (["create", "update", "replace", "delete", "same"] as Op[])
    .filter((op) => counts.has(op))
    .map((op) =>
      s.op(
        op,
        `${op === "same" ? "" : `${SYMBOL[op]} `}${counts.get(op)} ${result.operation === "refresh" ? refreshCount(op) : verbs[op]}`,
      ),
    );
  return `Resources: ${parts.length > 0 ? parts.join(", ") : "none"}`;
}

function refreshCount(op: Op): string {
  return op === "update" ? "drifted" : op === "delete" ? "gone" : "in sync";
}

/** The stack outputs as the Pulumi CLI prints them: nested and aligned, secrets as [secret], unknowns as [unknown]. */
export function outputLines(outputs: Record<string, unknown>): string[] {
  return keyed(outputs, "    ");
}

function keyed(object: Record<string, unknown>, indent: string): string[] {
  // Keys of nested outputs are the cloud's too (a map of service URLs by service name).
  const names = Object.keys(object).sort();
  const shown = new Map(names.map((name) => [name, terminalSafe(name)]));
  const width = Math.max(0, ...[...shown.values()].map((n) => n.length));
  return names.flatMap((name) =>
    nested(`${indent}${shown.get(name)!.padEnd(width)}: `, object[name], indent),
  );
}

function nested(prefix: string, value: unknown, indent: string): string[] {
  const shown = displayValue(value);
  if (shown === "[secret]" || shown === "[unknown]") return [`${prefix}${shown}`];
  if (Array.isArray(value) && value.length > 0) {
    const inner = `${indent}    `;
    return [
      `${prefix}[`,
      ...value.flatMap((item, i) => nested(`${inner}[${i}]: `, item, inner)),
      `${indent}]`,
    ];
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) {
    return [`${prefix}{`, ...keyed(value as Record<string, unknown>, `${indent}    `), `${indent}}`];
  }
  return [`${prefix}${formatValue(value)}`];
}
