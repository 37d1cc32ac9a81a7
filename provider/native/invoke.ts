/**
 * Invoke: the nine data sources as the package's functions (`gpucloud:index:getGpu`, ...), with the
 * arguments and results of the TypeScript functions. Arguments are checked against the function's
 * schema first, so a wrong one is named before any API call.
 */
import { status } from "@grpc/grpc-js";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import type { FunctionSpec, PropertySpec } from "../codegen/package-schema";
import { token } from "../tokens";
import { checkFailure } from "./answers";
import { RpcError } from "./errors";
import { unwrap, wrap, type Props } from "./wire";

type DataSource = (args: Props) => Promise<unknown>;

let loaded: Map<string, DataSource> | undefined;

/**
 * The data sources by token, loaded at the first Invoke: they bring the whole @pulumi/pulumi SDK, which
 * would double the plugin's start (the engine waits for it) for stacks that call no function.
 */
function functionsByToken(): Map<string, DataSource> {
  const { dataSources } = require("../datasources/functions") as typeof import("../datasources/functions");
  loaded ??= new Map(
    Object.entries(dataSources).map(([name, fn]) => [token(name), fn as unknown as DataSource]),
  );
  return loaded;
}

/** The JavaScript type a schema primitive takes, and what to call it in a message. */
const PRIMITIVES: Record<string, [test: (v: unknown) => boolean, called: string]> = {
  string: [(v) => typeof v === "string", "a string"],
  boolean: [(v) => typeof v === "boolean", "a boolean"],
  number: [(v) => typeof v === "number", "a number"],
  integer: [(v) => Number.isInteger(v), "an integer"],
};

function typeFailure(name: string, spec: PropertySpec, value: unknown, secret: boolean): string | undefined {
  const primitive = spec.type && PRIMITIVES[spec.type];
  if (!primitive || primitive[0](value)) return undefined;
  return `${name} must be ${primitive[1]}, got ${secret ? "a secret value" : JSON.stringify(value)}`;
}

/**
 * Each argument against the function's inputs: known, of the right type, and every required one given.
 * The value of a `secrets` argument is never shown.
 */
export function argumentFailures(
  fn: string,
  spec: FunctionSpec,
  args: Props,
  secrets: ReadonlySet<string> = new Set(),
): provproto.CheckFailure[] {
  const properties = spec.inputs?.properties ?? {};
  const allowed = Object.keys(properties);
  const failures: provproto.CheckFailure[] = [];
  for (const [name, value] of Object.entries(args)) {
    const property = properties[name];
    if (!property) {
      const known = allowed.length > 0 ? `arguments: ${allowed.join(", ")}` : "it takes no arguments";
      failures.push(checkFailure(name, `${name} is not an argument of ${fn} (${known})`));
      continue;
    }
    const reason = value === null ? undefined : typeFailure(name, property, value, secrets.has(name));
    if (reason) failures.push(checkFailure(name, reason));
  }
  for (const name of spec.inputs?.required ?? []) {
    if (args[name] === undefined || args[name] === null)
      failures.push(checkFailure(name, `${name} is required by ${fn}`));
  }
  return failures;
}

export async function invoke(
  req: provproto.InvokeRequest,
  specs: Record<string, FunctionSpec>,
): Promise<provproto.InvokeResponse> {
  const tok = req.getTok();
  const functions = functionsByToken();
  const fn = functions.get(tok);
  const spec = specs[tok];
  if (!fn || !spec) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `${tok} is not a function of this provider (functions: ${[...functions.keys()].join(", ")}).`,
    );
  }
  const { props: args, secrets } = unwrap(req.getArgs());
  const res = new provproto.InvokeResponse();
  const failures = argumentFailures(tok, spec, args, secrets);
  if (failures.length > 0) {
    res.setFailuresList(failures);
    return res;
  }
  const present = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
  const result = (await fn(present)) as Props;
  // A result computed from a secret argument is secret as a whole.
  res.setReturn(wrap(result, secrets.size > 0 ? Object.keys(result) : []));
  return res;
}
