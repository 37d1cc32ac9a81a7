/**
 * Client-side checks of workflow and model-run inputs, run before anything is sent
 * (the API's rules for workflow submit, model-run videos and media resources).
 * Each check returns issues `{field, reason}`; the callers turn them into one InputValidationError.
 */
import type { InputIssue } from "./errors";
import { terminalSafe } from "./terminal-safe";

/** The parts of a manifest entry the checks read (see workflows.ts for the full schema). */
export interface ManifestParameter {
  name: string;
  value_type: string;
  required?: boolean;
  ui_schema?: { control?: string; options?: { label?: string; value?: unknown }[] } | null;
}

type ScalarKind = "string" | "int" | "float" | "bool";

// Maps, not plain objects: value_type and generation_category come from outside, and a key such as
// "constructor" must not find Object.prototype's members.
const SCALAR_TYPES = new Map<string, ScalarKind>([
  ["string", "string"],
  ["int", "int"],
  ["float", "float"],
  ["bool", "bool"],
]);

const MEDIA_TYPES = new Map<string, string>([
  ["image_input", "image"],
  ["video_input", "video"],
  ["audio_input", "audio"],
  ["file_input", "file"],
  ["image", "image"],
  ["video", "video"],
  ["audio", "audio"],
  ["file", "file"],
]);

const SCALAR_EXPECTED = new Map<ScalarKind, string>([
  ["string", "a string"],
  ["int", "an integer (not quoted)"],
  ["float", "a number (not quoted)"],
  ["bool", "a boolean (not a string)"],
]);

// docs/design/cloud-api.md#versioning
/** Kept for historical video workflows, not declared in manifests. */
const LEGACY_WORKFLOW_FLAGS = new Set(["contains_real_person_material"]);

const DATA_URL = /^data:[\w.+-]+\/[\w.+-]+(;[\w-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/]+=*$/;
const ASSET_URI = /^asset:\/\/asset_[A-Za-z0-9_-]+$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One rule's verdict on one input: its issue, or undefined when the input keeps the rule. */
export type Verdict = InputIssue | undefined;

/** The issues among a request's verdicts (and lists of issues found elsewhere), in order. */
export function issuesOf(...verdicts: (Verdict | InputIssue[])[]): InputIssue[] {
  return verdicts.flatMap((verdict) => verdict ?? []);
}

export function rule(field: string, holds: boolean, reason: string): Verdict {
  return holds ? undefined : { field, reason };
}

export function required(field: string, value: unknown): Verdict {
  return rule(field, typeof value === "string" && value.trim() !== "", "is required (a non-empty string)");
}

export function oneOf(field: string, allowed: readonly unknown[], value: unknown): Verdict {
  return rule(
    field,
    allowed.includes(value),
    `must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`,
  );
}

/** A value for a message: as JSON, escaped and cut (a manifest's values are the server's text). */
function show(value: unknown): string {
  return terminalSafe(JSON.stringify(value) ?? String(value), 60);
}

/** The most a message lists of a manifest (its names, a select's options). */
const MAX_LISTED_CHARS = 300;

/** Why a resource string is not acceptable, or undefined when it is. */
export function resourceStringProblem(value: string): string | undefined {
  if (/^asset_/.test(value)) return `a bare asset id is not valid; write "asset://${value}"`;
  if (value.startsWith("asset://"))
    return ASSET_URI.test(value) ? undefined : "must be asset://asset_<token>";
  if (value.startsWith("data:"))
    return DATA_URL.test(value) ? undefined : "must be a data URL data:<mime>;base64,<data>";
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return undefined;
  } catch {
    // Falls through to the general reason below.
  }
  return `must be a public http(s) URL, a data URL or an asset://<asset_id> reference, got ${show(value)}`;
}

// docs/design/cloud-api.md#media-inputs-and-labels
/** Label normalisation: trim whitespace, then drop one leading "@". */
export function normalizeLabel(label: string): string {
  const trimmed = label.trim();
  return (trimmed.startsWith("@") ? trimmed.slice(1) : trimmed).trim();
}

/**
 * Checks labels across one request: collects them so uniqueness spans every media value, and
 * rewrites each label to its normalised form in the value sent.
 */
class MediaChecker {
  readonly issues: InputIssue[] = [];
  private readonly labels = new Map<string, string>();

  /** Checks a single resource (string or {uri, role, label}); returns it with a normalised label. */
  resource(field: string, value: unknown): unknown {
    if (typeof value === "string") {
      const problem = resourceStringProblem(value);
      if (problem) this.issues.push({ field, reason: problem });
      return value;
    }
    if (!isRecord(value)) {
      this.issues.push({
        field,
        reason: `must be a resource string or an object {uri, role, label}, got ${show(value)}`,
      });
      return value;
    }
    if (typeof value.uri !== "string") {
      this.issues.push({ field: `${field}.uri`, reason: "is required (a resource string)" });
    } else {
      const problem = resourceStringProblem(value.uri);
      if (problem) this.issues.push({ field: `${field}.uri`, reason: problem });
    }
    if (value.role !== undefined && typeof value.role !== "string") {
      this.issues.push({ field: `${field}.role`, reason: "must be a string" });
    }
    if (value.label === undefined) return value;
    if (typeof value.label !== "string") {
      this.issues.push({ field: `${field}.label`, reason: "must be a string" });
      return value;
    }
    const label = normalizeLabel(value.label);
    if (label === "") {
      this.issues.push({
        field: `${field}.label`,
        reason: "is empty once trimmed of whitespace and a leading @",
      });
    } else if (this.labels.has(label)) {
      this.issues.push({
        field: `${field}.label`,
        reason: `"${label}" is already used by ${this.labels.get(label)}; labels must be unique in a request`,
      });
    } else {
      this.labels.set(label, field);
    }
    return { ...value, label };
  }

  /** A single resource or a list of them. */
  resources(field: string, value: unknown): unknown {
    return Array.isArray(value)
      ? value.map((v, i) => this.resource(`${field}[${i}]`, v))
      : this.resource(field, value);
  }

  list(field: string, value: unknown): unknown {
    if (!Array.isArray(value)) {
      this.issues.push({ field, reason: `must be an array of resources, got ${show(value)}` });
      return value;
    }
    return value.map((v, i) => this.resource(`${field}[${i}]`, v));
  }
}

function scalarProblem(kind: ScalarKind, value: unknown): string | undefined {
  const ok =
    kind === "string"
      ? typeof value === "string"
      : kind === "int"
        ? typeof value === "number" && Number.isInteger(value)
        : kind === "float"
          ? typeof value === "number" && Number.isFinite(value)
          : typeof value === "boolean";
  if (ok) return undefined;
  return `must be ${SCALAR_EXPECTED.get(kind)} for value_type ${kind}, got ${show(value)}`;
}

function selectProblem(param: ManifestParameter, value: unknown): string | undefined {
  const options = param.ui_schema?.control === "select" ? (param.ui_schema.options ?? []) : [];
  if (options.length === 0) return undefined;
  if (options.some((o) => o.value === value)) return undefined;
  const sameText = options.find((o) => String(o.value) === String(value));
  if (sameText) {
    return `must be the option value ${show(sameText.value)} with its original JSON type (${typeof sameText.value}), got ${show(value)}`;
  }
  const listed = terminalSafe(options.map((o) => show(o.value)).join(", "), MAX_LISTED_CHARS);
  return `must be one of the select options ${listed}, got ${show(value)}`;
}

export interface CheckedInputs {
  issues: InputIssue[];
  /** The inputs as they should be sent (labels normalised). */
  inputs: Record<string, unknown>;
}

/** Checks workflow inputs against the manifest (`editable_parameter_manifest`). */
export function checkWorkflowInputs(manifest: ManifestParameter[], inputs: unknown): CheckedInputs {
  if (inputs === undefined) inputs = {};
  if (!isRecord(inputs))
    return { issues: [{ field: "inputs", reason: "must be an object keyed by manifest names" }], inputs: {} };
  const media = new MediaChecker();
  const issues = media.issues;
  const byName = new Map(manifest.map((p) => [p.name, p]));
  // Built as a Map and turned into an object at the end: an input named "__proto__" stays an input.
  const out = new Map<string, unknown>();
  for (const [name, value] of Object.entries(inputs)) {
    const field = `inputs.${terminalSafe(name, 60)}`;
    out.set(name, value);
    if (LEGACY_WORKFLOW_FLAGS.has(name)) {
      if (typeof value !== "boolean") issues.push({ field, reason: "must be a boolean" });
      continue;
    }
    const param = byName.get(name);
    if (!param) {
      issues.push({
        field,
        reason: `is not declared in the workflow's manifest (declared: ${terminalSafe([...byName.keys()].join(", "), MAX_LISTED_CHARS) || "none"})`,
      });
      continue;
    }
    if (value === undefined || value === null) {
      if (param.required) issues.push({ field, reason: "is required and must have a value" });
      continue;
    }
    const scalar = SCALAR_TYPES.get(param.value_type);
    if (scalar) {
      const problem = scalarProblem(scalar, value) ?? selectProblem(param, value);
      if (problem) issues.push({ field, reason: problem });
    } else if (MEDIA_TYPES.has(param.value_type)) {
      out.set(name, media.resources(field, value));
    } else {
      // Other historical value_type aliases exist (docs/design/cloud-api.md#workflow-detail); their JSON type is
      // unknown, so only select options are checked.
      const problem = selectProblem(param, value);
      if (problem) issues.push({ field, reason: problem });
    }
  }
  for (const param of manifest) {
    if (param.required && !Object.hasOwn(inputs, param.name)) {
      issues.push({
        field: `inputs.${terminalSafe(param.name, 60)}`,
        reason: `is required by the workflow (value_type ${terminalSafe(param.value_type, 60)}) and missing`,
      });
    }
  }
  return { issues, inputs: Object.fromEntries(out) };
}

const FRAME_RULES = new Map<string, string[]>([
  ["first_frame_to_video", ["first_frame"]],
  ["first_last_frame_to_video", ["first_frame", "last_frame"]],
]);

// docs/design/cloud-api.md#model-runs
/** Checks model-run inputs. */
export function checkModelRunInputs(inputs: unknown): CheckedInputs {
  if (!isRecord(inputs))
    return {
      issues: [{ field: "inputs", reason: "is required (an object with model and prompt)" }],
      inputs: {},
    };
  const media = new MediaChecker();
  const issues = media.issues;
  const out: Record<string, unknown> = { ...inputs };
  issues.push(...issuesOf(required("inputs.model", inputs.model), required("inputs.prompt", inputs.prompt)));
  const category = inputs.generation_category;
  if (category !== undefined && typeof category !== "string") {
    issues.push({ field: "inputs.generation_category", reason: "must be a string" });
  }
  for (const name of typeof category === "string" ? (FRAME_RULES.get(category) ?? []) : []) {
    if (inputs[name] === undefined) {
      issues.push({ field: `inputs.${name}`, reason: `is required for generation_category ${category}` });
    }
  }
  for (const name of ["first_frame", "last_frame"]) {
    if (inputs[name] !== undefined) out[name] = media.resource(`inputs.${name}`, inputs[name]);
  }
  for (const name of ["images", "videos", "audios"]) {
    if (inputs[name] !== undefined) out[name] = media.list(`inputs.${name}`, inputs[name]);
  }
  if (
    inputs.duration !== undefined &&
    !(Number.isInteger(inputs.duration) && (inputs.duration as number) > 0)
  ) {
    issues.push({
      field: "inputs.duration",
      reason: `must be a positive integer number of seconds, got ${show(inputs.duration)}`,
    });
  }
  for (const name of ["resolution", "ratio"]) {
    if (inputs[name] !== undefined && typeof inputs[name] !== "string")
      issues.push({ field: `inputs.${name}`, reason: "must be a string" });
  }
  if (
    inputs.contains_real_person_material !== undefined &&
    typeof inputs.contains_real_person_material !== "boolean"
  ) {
    issues.push({ field: "inputs.contains_real_person_material", reason: "must be a boolean" });
  }
  return { issues, inputs: out };
}

/** An idempotency key: required on workflow and model-run submits. */
export function idempotencyKey(key: unknown): Verdict {
  const holds = typeof key === "string" && key.trim() !== "";
  return rule(
    "idempotency_key",
    holds,
    "is required (a non-empty string, unique per business call; reuse it when retrying)",
  );
}
