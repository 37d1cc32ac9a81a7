import { z } from "zod";

export const int = z.number().int();

/** Money as the API sends it: a decimal string, kept as a string so no digit is lost. */
export const decimal = z.string().describe("decimal string, kept exact");

/** A list field; a JSON null (seen for empty lists on some services) reads as an empty list. */
export function listOf<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .nullable()
    .transform((v): z.infer<T>[] => v ?? []);
}

/**
 * A field the API may leave out: absent, or sent as JSON null (the spec says "when set" of a title, and
 * services send null for a field they have no value for), both read as absent. Only a value of the
 * wrong type is refused, with the inner schema's own message.
 */
export function whenSet<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === null ? undefined : value), schema.optional()).optional();
}

/** The data of an answer that carries none the SDK uses: read as nothing. */
export const NoData = z.unknown().transform(() => undefined);

/**
 * Run statuses as the SDK reports them. Public clients of the live service also meet the spelling
 * "canceled"; the SDK reads it as the documented "cancelled", in answers and in filters it sends.
 */
export function normalizeRunStatus(status: string): string {
  return status === "canceled" ? "cancelled" : status;
}

export const runStatus = z.string().transform(normalizeRunStatus);

/** A list query whose status filter is sent in the documented spelling. */
export function withRunStatus<Q extends { status?: string }>(query: Q): Q {
  return query.status === undefined ? query : { ...query, status: normalizeRunStatus(query.status) };
}
