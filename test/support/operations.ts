/** What tests of whole operations share. */
import { OperationError } from "../../testing";

/** The failure an operation was rejected with (the test fails when it was not rejected so). */
export async function failureOf(operation: Promise<unknown>): Promise<OperationError> {
  const error = await operation.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(OperationError);
  return error as OperationError;
}
