/**
 * What one Instance adds to the stack's hourly cost. An instance bills from its create until its stop, and
 * the API has no stopped create: one declared `running: false` is created running and stopped as soon as
 * the cloud allows, and the cloud pre-deducts its first hour at create. So a new instance counts at its
 * price whatever its `running`; one that already exists counts at the model it runs on, or nothing when
 * it is declared stopped.
 *
 * A resource policy sees an instance's inputs only: whether it already exists is read from the cloud's
 * instance list by its title, the owner's mark the provider gives every instance it makes (a fleet's
 * member, priced from its fleet's inputs before it is registered, by the autoname the fleet gives it), and
 * only when the answer changes the price (a list of fallback models, or `running: false`). A stack policy
 * sees its outputs: an instance with a known instanceUuid exists, and its runningGpuUuid (in a state written
 * before that output existed, its gpuUuid) is the model it runs on.
 */
import { instancesMarked } from "./cloud";
import { priceOf, type InstancePrice, type RunsOn } from "./prices";
import { Unknown, type InstanceFacts } from "./resources";

/** What an instance adds: its price (a worst case where it says so), nothing, or why it cannot be priced. */
export type Cost = { counts: true; price: InstancePrice } | { counts: false } | { problem: string };

const CREATED_RUNNING =
  "declared running: false, but the cloud creates it running: it bills from its create until it is stopped, " +
  "and the cloud takes its first hour's price from the balance at create";
const RUNNING_NOT_KNOWN = "running is not known until up: counted as running";

/** Whether an instance of the cloud, by its title, bears the owner's mark of the instance being priced. */
export type Mark = (title: string) => boolean;

/**
 * The cost of an instance as a resource policy sees it, from its inputs; `mark` tells it among the cloud's
 * instances (by default its title; none: it is priced as a new instance).
 */
export async function costFromInputs(
  instance: InstanceFacts,
  mark: Mark | undefined = titleMark(instance),
): Promise<Cost> {
  const existing = mark && needsLookup(instance) ? await existingModel(instance, mark) : undefined;
  if (instance.running === false && existing) return { counts: false };
  return costed(instance, existing);
}

/** The cost of an instance as a stack policy sees it, from its outputs (or, for one still to be made, its inputs). */
export async function costFromOutputs(instance: InstanceFacts): Promise<Cost> {
  const exists = typeof instance.instanceUuid === "string" && instance.instanceUuid !== "";
  if (exists && instance.running === false) return { counts: false };
  const model = typeof instance.runningGpuUuid === "string" ? instance.runningGpuUuid : instance.gpuUuid;
  const runsOn = exists && typeof model === "string" ? { gpuUuids: [model] } : undefined;
  return costed(instance, runsOn);
}

async function costed(instance: InstanceFacts, runsOn: RunsOn | undefined): Promise<Cost> {
  const price = await priceOf(instance, runsOn);
  if ("problem" in price) return price;
  if (instance.running === false) price.worstCase.push(CREATED_RUNNING);
  if (instance.running instanceof Unknown) price.worstCase.push(RUNNING_NOT_KNOWN);
  return { counts: true, price };
}

/** Whether it matters that the instance already exists: it runs on one model of a list, or is declared stopped. */
function needsLookup({ running, fallbackGpuUuids }: InstanceFacts): boolean {
  return running === false || (Array.isArray(fallbackGpuUuids) && fallbackGpuUuids.length > 0);
}

function titleMark({ title }: InstanceFacts): Mark | undefined {
  return typeof title === "string" && title !== "" ? (other) => other === title : undefined;
}

/**
 * The model of the instance this one's inputs describe, if it already exists: bearing its mark, on as
 * many GPUs, on a model of its list (another model or count would be a replacement, a new instance).
 */
async function existingModel(instance: InstanceFacts, mark: Mark): Promise<RunsOn | undefined> {
  const { gpuUuid, fallbackGpuUuids, gpuNums } = instance;
  if (typeof gpuNums !== "number") return undefined;
  const models = [gpuUuid, ...(Array.isArray(fallbackGpuUuids) ? fallbackGpuUuids : [])];
  const matches = (await instancesMarked(mark)).filter(
    (i) => i.gpuNums === gpuNums && i.gpuUuid !== undefined && models.includes(i.gpuUuid),
  );
  // Two instances bearing one mark (another stack's, say) leave it open which is this one: it is priced
  // at the dearer of their models.
  return matches.length > 0 ? { gpuUuids: matches.map((i) => i.gpuUuid as string) } : undefined;
}
