/** A failure of the plugin as the gRPC status the engine receives: its code from the one table, its details. */
import { messageOf } from "../framework/errors";
import { failureCode } from "../failure-codes";
import { initFailed, InitFailedError, inputsRefused, InputsRefusedError, type RpcFailure } from "./errors";
import { redact } from "./redact";

/** Any failure as the status the engine receives; `hidden` are the texts of the call's secret inputs (see `secretTexts`). */
export function rpcFailure(err: unknown, hidden: readonly string[] = []): RpcFailure {
  const code = failureCode(err);
  if (err instanceof InitFailedError) return initFailed(err, code, hidden);
  if (err instanceof InputsRefusedError) return inputsRefused(err, code, hidden);
  return { code, details: redact(messageOf(err), hidden) };
}
