/**
 * The GPU stock room's state schema: each model given a stock, as the state file and snapshots hold it.
 */
import { z } from "zod";
import { nonEmpty, uniqueList } from "../core/state/schema";

/** A number of GPU cards. */
export const cardCount = z.int({ message: "must be a whole number of cards" }).min(0);
export const probability = z.number().min(0).max(1);
export const randomSeed = z.int().min(0).max(0xffffffff);

/**
 * The stock of one GPU model, as the state file and snapshots hold it. Only models given a stock are
 * listed; the others have unlimited cards. The cards in use are never saved: they are counted from the
 * instances, so a state document cannot make them disagree.
 */
export const stockRecordSchema = z.strictObject({
  gpu_uuid: nonEmpty,
  /** The cards the cloud has of this model, free and in use; null for unlimited. */
  cards: cardCount.nullable(),
  /** How likely a create or start of this model is refused although cards are free (0 never). */
  refuse_probability: probability,
  /** The seed those draws were given, null when they are not repeatable. */
  seed: randomSeed.nullable(),
  /** Where the seeded draws stand (core/random.ts), so a restart goes on with the same sequence. */
  draw_state: randomSeed.nullable(),
});
export type StockRecord = z.infer<typeof stockRecordSchema>;

export const stockStateSchema = uniqueList(stockRecordSchema, (record) => record.gpu_uuid, "gpu_uuid");
