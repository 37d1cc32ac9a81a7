/**
 * A fleet's hourly price from the catalogue, known before anything is rented: its running members each at
 * the price `estimateHourlyPrice` gives one instance (pod price + GPU price × gpuNums; an image's members
 * at the GPU's price alone, as the cost guard prices them). The catalogue is read with the data sources, so
 * with the program's settings in a program and with the plugin's own in the plugin's Construct.
 */
import Decimal from "decimal.js";
import { getGpus, getPods } from "../generated/data-sources";
import { CURRENCY, estimateHourlyPrice } from "../datasources/pricing";

/** What a fleet's price depends on. */
export interface FleetPricing {
  size: number;
  running: boolean;
  /** Absent: the members are made from an image, which the catalogue does not price. */
  podUuid?: string;
  gpuUuid: string;
  gpuNums: number;
}

/** The price of every member together, per hour in CNY; an error naming the input whose catalogue entry is missing. */
export async function fleetHourlyPrice(fleet: FleetPricing): Promise<number> {
  if (fleet.size === 0 || !fleet.running) return 0;
  // Invalid GPU models are listed too: a member of one still bills until it is gone.
  const [{ gpus }, pods] = await Promise.all([
    getGpus({ includeInvalid: true }),
    fleet.podUuid === undefined ? undefined : getPods(),
  ]);
  const gpu = gpus.find((g) => g.gpuUuid === fleet.gpuUuid);
  if (!gpu) throw unpriced("gpuUuid", fleet.gpuUuid, "a GPU model of the cloud's catalogue (getGpus)");
  const pod =
    pods === undefined
      ? { hourlyPrice: 0, currency: CURRENCY }
      : pods.pods.find((p) => p.podUuid === fleet.podUuid);
  if (!pod) throw unpriced("podUuid", fleet.podUuid, "a pod of the cloud's catalogue (getPods)");
  const each = estimateHourlyPrice({ pod, gpu, gpuNums: fleet.gpuNums }).amount;
  // Decimal keeps 0.1 × 3 at 0.3: the price is shown next to the catalogue's.
  return new Decimal(each).times(fleet.size).toNumber();
}

function unpriced(input: string, value: string | undefined, what: string): Error {
  return new Error(
    `Could not price the fleet: its ${input} ${JSON.stringify(value)} is not ${what}, so no member could be ` +
      `created either. Fix ${input} in your program.`,
  );
}
