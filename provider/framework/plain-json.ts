/**
 * Outputs cross gRPC as a protobuf Struct: undefined, Date and BigInt break it (DESIGN §7).
 * A JSON round trip leaves plain data (absent fields are dropped).
 */
export function plainJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
