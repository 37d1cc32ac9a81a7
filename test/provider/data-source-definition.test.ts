/**
 * A data source is one definition: a field declared on its zod result is in the package schema's
 * function, in the public TypeScript interface and on its reference page, with its description,
 * and nothing else needs writing for it.
 */
import { z } from "zod";
import { dataSourceSchemas } from "../../provider/codegen/json-schema";
import { packageSchema } from "../../provider/codegen/package-schema";
import { dataSourcePage } from "../../provider/codegen/reference/data-source-page";
import { dataSourcesModule } from "../../provider/codegen/typescript-source";
import { defineDataSource } from "../../provider/framework/define-data-source";

const quota = z
  .object({ remaining: z.number().describe("GPU hours left this month.") })
  .meta({ id: "TestQuota", description: "A quota." });

const getQuota = defineDataSource({
  name: "getQuota",
  description: "Reads the quota.",
  example: 'const { remaining } = await gpucloud.getQuota({ region: "east" });',
  args: z.object({
    region: z.string().describe("Where."),
    strict: z.boolean().default(false).describe("Fail when unknown."),
  }),
  result: quota,
  read: () => Promise.resolve({ remaining: 1 }),
});

const sources = [{ definition: getQuota, schemas: dataSourceSchemas(getQuota) }];
const schema = packageSchema({ version: "0.0.0", resources: [], components: [], dataSources: sources });

describe("a data source definition", () => {
  it("is the package schema's function: its arguments, their defaults and its result inline", () => {
    expect(schema.functions["gpucloud:index:getQuota"]).toEqual({
      description: "Reads the quota.",
      inputs: {
        properties: {
          region: { type: "string", description: "Where." },
          strict: { type: "boolean", description: "Fail when unknown.", default: false },
        },
        required: ["region"],
      },
      outputs: {
        properties: { remaining: { type: "number", description: "GPU hours left this month." } },
        required: ["remaining"],
      },
    });
  });

  it("is the public functions and the interfaces they use, named after the result's id", () => {
    const source = dataSourcesModule(sources);
    expect(source).toContain("export interface TestQuota {");
    expect(source).toContain("/** GPU hours left this month. */\n  remaining: number;");
    expect(source).toContain("/** Fail when unknown. @defaultValue false */\n  strict?: boolean;");
    expect(source).toContain(
      "export function getQuota(args: GetQuotaArgs, opts?: DataSourceOptions): Promise<TestQuota> {",
    );
    expect(source).toContain("args: InputArgs<GetQuotaArgs>,");
    expect(source).not.toMatch(/zod/);
  });

  it("is its reference page, with its example and each result field", () => {
    const page = dataSourcePage(schema, getQuota);
    expect(page).toContain("# getQuota");
    expect(page).toContain('await gpucloud.getQuota({ region: "east" })');
    expect(page).toMatch(/`remaining` .*GPU hours left this month\./);
  });
});
