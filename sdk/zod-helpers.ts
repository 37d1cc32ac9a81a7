import { z } from "zod";

export const int = z.number().int();

/** A list field; a JSON null (seen for empty lists on some services) reads as an empty list. */
export function listOf<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .nullable()
    .transform((v): z.infer<T>[] => v ?? []);
}

export const NoData = z.unknown();
