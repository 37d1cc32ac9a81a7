/**
 * Every data source checks its arguments against its definition before any call: a JavaScript caller
 * (no type check) or a hostile one gets an error naming the field and the rule, and the cloud sees
 * no request.
 */
import * as gpucloud from "../../provider/datasources";
import { DATA_SOURCES } from "../../provider/datasources/functions";
import { connectionFor, requests, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();

type Call = (args: unknown, opts: object) => Promise<unknown>;
const call = (name: string) => (gpucloud as unknown as Record<string, Call>)[name];

const WRONG: [name: string, args: object, message: string][] = [
  ["getGpus", { includeInvalid: "yes" }, "getGpus: includeInvalid must be a boolean"],
  ["getGpu", { name: 4090 }, "getGpu: name must be a string"],
  ["getGpu", {}, "getGpu: name is missing"],
  ["getPods", { name: ["comfy"] }, "getPods: name must be a string"],
  ["getPod", { title: "ComfyUI", tag: 1 }, "getPod: tag must be a string"],
  ["getMarketImages", { cudaVersion: 12.4 }, "getMarketImages: cudaVersion must be a string"],
  ["getWorkflow", { workflowId: null }, "getWorkflow: workflowId must be a string"],
];

describe("a data source's arguments", () => {
  it.each(WRONG)("%s(%j) is refused naming the field, before any request", async (name, args, message) => {
    const opts = connectionFor(emu);
    await expect(call(name)(args, opts)).rejects.toThrow(message);
    await expect(resolveOutput(call(`${name}Output`)(args, opts) as never)).rejects.toThrow(message);
    expect(await requests(emu)).toHaveLength(0);
  });

  it("are checked for every data source that takes any", () => {
    const checked = new Set(WRONG.map(([name]) => name));
    expect(
      DATA_SOURCES.filter((d) => d.args)
        .map((d) => d.name)
        .filter((n) => !checked.has(n)),
    ).toEqual([]);
  });

  it("that a definition does not declare are not passed on", async () => {
    const { gpus } = await gpucloud.getGpus(
      { includeInvalid: false, bogus: true } as never,
      connectionFor(emu),
    );
    expect(gpus.every((g) => g.valid)).toBe(true);
  });
});

describe("the public functions", () => {
  it("are every definition, each in its Promise and its Output form", () => {
    for (const { name } of DATA_SOURCES) {
      expect({ name, forms: [typeof call(name), typeof call(`${name}Output`)] }).toEqual({
        name,
        forms: ["function", "function"],
      });
    }
  });
});
