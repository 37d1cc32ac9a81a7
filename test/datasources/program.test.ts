import * as pulumi from "@pulumi/pulumi";
import {
  estimateHourlyPriceOutput,
  getGpuOutput,
  getInstancesOutput,
  getPodOutput,
} from "../../provider/datasources";
import { API_KEY, requests, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

/** Inputs each mocked resource was registered with, by resource name. */
const registered = new Map<string, Record<string, unknown>>();
const emu = useDataSourceCloud();

beforeEach(() => {
  registered.clear();
  pulumi.runtime.setAllConfig({ "gpucloud:baseUrl": emu.url, "gpucloud:apiKey": API_KEY }, [
    "gpucloud:apiKey",
  ]);
});
afterEach(() => pulumi.runtime.setAllConfig({}));

function runAs(preview: boolean): void {
  void pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.set(args.name, args.inputs as Record<string, unknown>);
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: (args) => args.inputs,
    },
    "datasources",
    preview ? "preview" : "up",
    preview,
  );
}

/** A stand-in for the provider's resources: only its inputs matter here. */
class Recorder extends pulumi.CustomResource {
  constructor(name: string, props: Record<string, pulumi.Input<unknown>>) {
    super("gpucloud:test:Recorder", name, props);
  }
}

describe.each([
  ["pulumi up", false],
  ["pulumi preview", true],
])("inside a Pulumi program (%s, mocked engine)", (_label, preview) => {
  it("feeds data source Outputs, read with stack config, into resource inputs", async () => {
    runAs(preview);
    const gpu = getGpuOutput({ name: "4090D" });
    const pod = getPodOutput({ title: "ComfyUI" });
    const recorder = new Recorder("worker", {
      gpuUuid: gpu.gpuUuid,
      podUuid: pod.podUuid,
      podTag: pod.tag,
      hourly: estimateHourlyPriceOutput({ pod, gpu, gpuNums: 2 }).amount,
      instanceCount: getInstancesOutput().instances.length,
    });
    await resolveOutput(recorder.urn);

    const [g, p] = await Promise.all([resolveOutput(gpu), resolveOutput(pod)]);
    expect(registered.get("worker")).toEqual({
      gpuUuid: g.gpuUuid,
      podUuid: p.podUuid,
      podTag: p.latestTag,
      hourly: expect.closeTo((p.hourlyPrice ?? NaN) + g.hourlyPrice * 2, 10),
      instanceCount: 0,
    });
    expect(await requests(emu, "/gpu/list")).toHaveLength(1);
  });
});
