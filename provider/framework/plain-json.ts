/**
 * Outputs cross gRPC as a protobuf Struct: undefined, Date and BigInt break it
 * (docs/design/pulumi-machinery.md#outputs-are-plain-json).
 * A JSON round trip leaves plain data (absent fields are dropped).
 */
export function plainJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
