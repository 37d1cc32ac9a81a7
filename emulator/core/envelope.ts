/** The success envelope (CONTRACTS.md): `{code: 0, msg: "success", data?}`. */
export function ok(data?: unknown): { code: 0; msg: "success"; data?: unknown } {
  return data === undefined ? { code: 0, msg: "success" } : { code: 0, msg: "success", data };
}
