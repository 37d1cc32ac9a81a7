/**
 * The workflows room's input check: a run's inputs against its revision's manifest, refused as the execution
 * engine refuses them.
 */
import { businessError, ApiError } from "../core/http/errors";
import { checkMediaValue, LabelBook, MediaContext, MediaInputProblem } from "../assets/media-inputs";
import { AssetStore } from "../assets/store";
import { type ManifestEntry, MEDIA_VALUE_TYPES } from "./entries";

/** Legacy flag accepted on every workflow (docs/design/cloud-api.md#versioning). */
const LEGACY_FLAG = "contains_real_person_material";

/** The engine's refusal (docs/design/cloud-api.md#workflow-submit-failures): msg equals data.error.reason. */
export function engineRejection(reason: string, detail: string): ApiError {
  return businessError(reason, {
    error: { reason, detail, engine_code: "INVALID_WORKFLOW_INPUT", status_code: 400 },
  });
}

/**
 * Checks submit inputs against a revision's manifest the way the execution engine does, and returns
 * them with media labels normalised. Every refusal is an engine rejection naming the input at fault.
 */
export function checkWorkflowInputs(
  inputs: Record<string, unknown>,
  manifest: readonly ManifestEntry[],
  assets: AssetStore,
  owner: string,
  now: number,
): Record<string, unknown> {
  const byName = new Map(manifest.map((entry) => [entry.name, entry]));
  const media: MediaContext = { assets, owner, now, labels: new LabelBook() };
  const checked: [string, unknown][] = [];
  for (const [name, value] of Object.entries(inputs)) {
    if (name === LEGACY_FLAG) {
      if (typeof value !== "boolean")
        throw engineRejection(`invalid input ${name}`, `inputs.${name} must be a boolean`);
      checked.push([name, value]);
      continue;
    }
    const entry = byName.get(name);
    if (!entry) {
      const declared = manifest.map((e) => e.name).join(", ");
      throw engineRejection(
        `unknown input ${name}`,
        `inputs.${name} is not in the manifest; declared names: ${declared}`,
      );
    }
    checked.push([name, checkValue(entry, value, media)]);
  }
  // Spec rule 5 says a missing required input makes "the run fail"; refusing at submit fails it before any charge.
  const missing = manifest
    .filter((entry) => entry.required && !Object.hasOwn(inputs, entry.name))
    .map((e) => e.name);
  if (missing.length > 0) {
    throw engineRejection(
      `missing required input ${missing[0]}`,
      `required inputs not sent: ${missing.join(", ")}`,
    );
  }
  return Object.fromEntries(checked);
}

function checkValue(entry: ManifestEntry, value: unknown, media: MediaContext): unknown {
  const refuse = (rule: string): ApiError =>
    engineRejection(`invalid input ${entry.name}`, `inputs.${entry.name} ${rule}`);
  if (entry.ui_schema?.control === "select") {
    const options = entry.ui_schema.options;
    if (!options.some((option) => option.value === value)) {
      const allowed = options.map((option) => JSON.stringify(option.value)).join(", ");
      throw refuse(`must be one of ${allowed}, keeping the option's JSON type; got ${JSON.stringify(value)}`);
    }
    return value;
  }
  const mediaType = MEDIA_VALUE_TYPES.get(entry.value_type);
  if (mediaType) {
    // Spec shows one resource per media input; a list is accepted too since labels bind "to the order of the resources".
    const values = Array.isArray(value) ? value : [value];
    if (values.length === 0) throw refuse("must name at least one resource");
    try {
      const normalised = values.map((item) => checkMediaValue(item, mediaType, media));
      return Array.isArray(value) ? normalised : normalised[0];
    } catch (problem) {
      if (problem instanceof MediaInputProblem) throw refuse(problem.message);
      throw problem;
    }
  }
  switch (entry.value_type) {
    case "string":
      if (typeof value !== "string")
        throw refuse(`must be a JSON string (value_type string); got ${JSON.stringify(value)}`);
      return value;
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        throw refuse(`must be a JSON integer, not quoted (value_type int); got ${JSON.stringify(value)}`);
      }
      return value;
    case "float":
      if (typeof value !== "number" || !Number.isFinite(value)) {
        throw refuse(`must be a JSON number, not quoted (value_type float); got ${JSON.stringify(value)}`);
      }
      return value;
    case "bool":
      if (typeof value !== "boolean")
        throw refuse(`must be true or false, not a string (value_type bool); got ${JSON.stringify(value)}`);
      return value;
    default:
      throw refuse(`has value_type ${entry.value_type}, which this engine does not know`);
  }
}
