/**
 * Reading a stack's resources back from the cloud (refresh, and the read before `preview --refresh` and
 * `up --refresh`): drift shows as `update`, a resource the provider reports gone as `delete`.
 */
import type { FrontDoor } from "../front-door";
import { ResourceInitFailedError, type ReadResult } from "../provider-process";
import type { ResourceRecord } from "../state";
import { holdsSecret, reveal, wrapSecrets, type Props } from "../wire";
import { refOf } from "./state-urns";
import { changes, stepOf, typeName, type Step } from "./steps";

export interface ReadAll {
  steps: Step[];
  failures: Error[];
  /** The records as read back, in the state's order; one that failed to read stays as it was. */
  resources: ResourceRecord[];
}

/** Every resource read back, side by side, reported in the state's order. */
export async function readAll(door: FrontDoor, records: ResourceRecord[]): Promise<ReadAll> {
  const steps: Step[] = [];
  const failures: Error[] = [];
  const resources: ResourceRecord[] = [];
  await Promise.all(
    records.map(async (record) => {
      try {
        const refreshed = await readBack(door, record, steps);
        if (refreshed) resources.push(refreshed);
      } catch (err) {
        failures.push(err as Error);
        resources.push(record);
      }
    }),
  );
  // Reads finish in any order; report and keep them in the state's order.
  const order = new Map(records.map((r, i) => [r.urn, i]));
  resources.sort((a, b) => order.get(a.urn)! - order.get(b.urn)!);
  steps.sort((a, b) => order.get(a.urn)! - order.get(b.urn)!);
  return { steps, failures, resources };
}

/**
 * A resource read back. The provider may answer with another id (Pulumi's refresh allows that), with no
 * id (the resource is gone), or with init errors (it is there but unfinished: kept, with them).
 */
async function readBack(
  door: FrontDoor,
  record: ResourceRecord,
  steps: Step[],
): Promise<ResourceRecord | undefined> {
  // A component has no provider to read it: it stays as it is.
  if (record.component) {
    steps.push(stepOf("same", record));
    return record;
  }
  let read: ReadResult;
  let initErrors: string[] | undefined;
  try {
    read = await door.read(
      refOf(record),
      record.id,
      wrapSecrets(record.outputs, record.secretOutputs),
      wrapSecrets(record.inputs, record.secretOutputs),
    );
  } catch (err) {
    if (!(err instanceof ResourceInitFailedError)) {
      throw new Error(`read of ${record.name} (${typeName(record.type)}) failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
    read = { id: err.id || record.id, outputs: err.outputs };
    initErrors = err.reasons;
  }
  if (read.id === "") {
    steps.push(stepOf("delete", record));
    return undefined;
  }
  const outputs = reveal(read.outputs) as Props;
  const secretOutputs = [
    ...new Set([
      ...record.secretOutputs,
      ...Object.keys(read.outputs).filter((k) => holdsSecret(read.outputs[k])),
    ]),
  ];
  const found = changes(record.outputs, outputs, secretOutputs, []);
  const op = found.length > 0 || read.id !== record.id ? "update" : "same";
  steps.push({ ...stepOf(op, record), id: read.id, changes: found, ...(initErrors ? { initErrors } : {}) });
  const { initErrors: _cleared, ...rest } = record;
  return {
    ...rest,
    id: read.id,
    outputs,
    inputs: read.inputs ? (reveal(read.inputs) as Props) : record.inputs,
    secretOutputs,
    ...(initErrors ? { initErrors } : {}),
  };
}
