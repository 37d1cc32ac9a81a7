/**
 * Every answer schema of the SDK reads a field it may go without, absent or JSON null, alike: the API
 * says a title is a string "when set", and services send null for what they have no value of. A field
 * that may be absent but refuses null would fail a whole answer (a whole instance list, every `up` of
 * the account) over one untitled record. This walks every exported schema, at every depth.
 */
import * as sdk from "pulumi-gpucloud/sdk";
import type { z } from "zod";

/** zod's own description of a schema: its kind and the schemas it is made of. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
  out?: z.ZodType;
  valueType?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { def: Def }).def;

/** The schemas `schema` is made of, one level down, with the path each part stands for. */
function parts(schema: z.ZodType, path: string): [string, z.ZodType][] {
  const def = defOf(schema);
  if (def.shape) return Object.entries(def.shape).map(([key, part]) => [`${path}.${key}`, part]);
  const wrapped = [def.innerType, def.in, def.out, def.valueType].filter((p) => p !== undefined);
  const element = def.element ? [def.element] : [];
  return [...wrapped, ...element, ...(def.options ?? [])].map((part) => [
    def.element === part ? `${path}[]` : path,
    part,
  ]);
}

/** Each field of an object, anywhere in `schema`, that accepts absence but refuses null. */
function absentButNotNull(schema: z.ZodType, path: string, seen = new Set<z.ZodType>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const def = defOf(schema);
  const here = def.shape
    ? Object.entries(def.shape)
        .filter(([, field]) => field.safeParse(undefined).success && !field.safeParse(null).success)
        .map(([key]) => `${path}.${key}`)
    : [];
  return [...here, ...parts(schema, path).flatMap(([p, part]) => absentButNotNull(part, p, seen))];
}

const answerSchemas = Object.entries(sdk as Record<string, unknown>).filter(
  (entry): entry is [string, z.ZodType] =>
    entry[0].endsWith("Schema") && typeof (entry[1] as { safeParse?: unknown }).safeParse === "function",
);

describe("the SDK's answer schemas", () => {
  it("are all found: every API area's records", () => {
    const names = answerSchemas.map(([name]) => name);
    for (const expected of [
      "InstanceSchema",
      "PodSchema",
      "PersonalImageSchema",
      "AssetSchema",
      "RunOrderSchema",
      "ModelRunSchema",
      "ExecutionSchema",
    ])
      expect(names).toContain(expected);
  });

  it.each(answerSchemas)(
    "%s reads every field it may go without as absent when it is null",
    (name, schema) => {
      expect(absentButNotNull(schema, name)).toEqual([]);
    },
  );

  it("reads title: null as no title and keeps refusing a title of the wrong type", () => {
    const record = { instance_uuid: "i-1", status: 2, title: null, shutdown_regular: null };
    const read = sdk.InstanceSchema.parse(record);
    expect(read.title).toBeUndefined();
    expect(read.shutdown_regular).toBeUndefined();
    const wrong = sdk.InstanceSchema.safeParse({ ...record, title: 7 });
    expect(wrong.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["title", "Invalid input: expected string, received number"],
    ]);
  });

  it("still refuses a record without a field it cannot go without", () => {
    expect(sdk.InstanceSchema.safeParse({ instance_uuid: "i-1", status: null }).success).toBe(false);
    expect(sdk.InstanceSchema.safeParse({ status: 2, title: "t" }).success).toBe(false);
  });
});
