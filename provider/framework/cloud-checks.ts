/**
 * Check's rules that read the cloud, such as an Instance's fallback GPU models against the GPU
 * catalogue. They run in both front doors' Check after the rules that need nothing but the inputs, and
 * only when the provider is configured: a Check without settings leaves them to the operation, which
 * checks again before it sends anything.
 */
import type { CheckFailure, CheckResult } from "./check";
import { providerContext, type ProviderContext } from "./context";
import type { AnyResourceDefinition } from "./define-resource";

export async function withCloudChecks<T extends Record<string, unknown>>(
  definition: AnyResourceDefinition,
  checked: CheckResult<T>,
  olds: Readonly<Record<string, unknown>>,
  secrets: ReadonlySet<string> = new Set(),
): Promise<CheckResult<T>> {
  const rules = definition.cloudChecks;
  if (!rules) return checked;
  let ctx: ProviderContext;
  try {
    ctx = providerContext();
  } catch {
    return checked;
  }
  const failed = new Set(checked.failures.map((f) => f.property));
  const found = await rules(ctx, checked.inputs, failed, olds);
  return { ...checked, failures: [...checked.failures, ...found.map((f) => hidingSecret(f, secrets))] };
}

function hidingSecret(failure: CheckFailure, secrets: ReadonlySet<string>): CheckFailure {
  if (!secrets.has(failure.property)) return failure;
  return {
    property: failure.property,
    reason: `${failure.property} fails a check against the cloud (the value is secret, so it is not shown)`,
  };
}
