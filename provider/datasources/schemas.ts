/** The zod schemas more than one data source's result uses. */
import { z } from "zod";
import { CURRENCY } from "./pricing";

export const currency = z.literal(CURRENCY).describe("The currency of the prices: always `CNY`.");

export const price = z
  .object({
    hour: z.number().describe("Price per hour."),
    day: z.number().optional().describe("Price per day, when listed."),
    week: z.number().optional().describe("Price per week, when listed."),
    month: z.number().optional().describe("Price per month, when listed."),
    year: z.number().optional().describe("Price per year, when listed."),
    currency,
  })
  .meta({
    id: "Price",
    description:
      "A catalogue price (of a GPU model or a pod). `hour` is always present; the others when the cloud lists them.",
  });
