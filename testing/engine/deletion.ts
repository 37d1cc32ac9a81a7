/** Deleting resources as the engine does: dependents first, those with no dependency between them side by side. */
import type { FrontDoor } from "../front-door";
import { dependencyLevels, type ResourceRecord } from "../state";
import { wrapSecrets } from "../wire";
import { refOf } from "./state-urns";
import type { StepRunner } from "./step-runner";
import { stepOf, type Operation, type Step } from "./steps";

export interface Deletion {
  failures: Error[];
  /** The records not deleted, which stay in the state. */
  survivors: ResourceRecord[];
}

/** Deletes `records` in reverse dependency order, each a step of `operation`, stopping after a level with a failure. */
export async function deleteAll(
  door: FrontDoor,
  runner: StepRunner,
  operation: Operation,
  records: ResourceRecord[],
  steps: Step[],
): Promise<Deletion> {
  const failures: Error[] = [];
  const deleted = new Set<ResourceRecord>();
  for (const level of dependencyLevels(records).reverse()) {
    await Promise.all(
      level.map(async (record) => {
        const step = stepOf("delete", record);
        steps.push(step);
        try {
          await runner.apply(operation, step, async () => {
            // A component has nothing to delete but its record.
            if (record.component) return;
            await door.delete(refOf(record), record.id, wrapSecrets(record.outputs, record.secretOutputs));
          });
          deleted.add(record);
        } catch (err) {
          failures.push(err as Error);
        }
      }),
    );
    if (failures.length > 0) break;
  }
  return { failures, survivors: records.filter((r) => !deleted.has(r)) };
}
