/**
 * Drops the keys whose value is undefined. Results hold only what the cloud reported, so an
 * exported result or a JSON dump never carries `undefined` (which Pulumi cannot serialise:
 * docs/design/pulumi-machinery.md#outputs-are-plain-json).
 */
export function withDefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
