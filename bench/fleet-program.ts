/**
 * The program the engine-path bench (bench/engine.ts) and the coalescing tests run: `bench:count`
 * Instances of one pod and GPU, each watched by an IdleClosePolicy. The pod and GPU come from config
 * rather than data sources, so that every API call counted is one the resources made.
 */
import * as pulumi from "@pulumi/pulumi";
import * as gpucloud from "pulumi-gpucloud";

export = async () => {
  const config = new pulumi.Config("bench");
  const count = config.requireNumber("count", { min: 0 });
  const podUuid = config.require("podUuid");
  const gpuUuid = config.require("gpuUuid");
  // Changing it changes every title: an update of every Instance in place.
  const titlePrefix = config.get("titlePrefix") ?? "fleet";
  for (let index = 0; index < count; index++) {
    const instance = new gpucloud.Instance(`fleet-${index}`, {
      podUuid,
      gpuUuid,
      gpuNums: 1,
      title: `${titlePrefix}-${index}`,
    });
    new gpucloud.IdleClosePolicy(`fleet-${index}-idle`, {
      instanceUuid: instance.instanceUuid,
      idlePeriodMinutes: 120,
    });
  }
  return { count };
};
