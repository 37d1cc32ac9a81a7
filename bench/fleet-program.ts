/**
 * The program the engine-path bench (bench/engine.ts) and the coalescing tests run: `bench:count`
 * Instances of one pod and GPU, each watched by an IdleClosePolicy. The pod and GPU come from config
 * rather than data sources, so that every API call counted is one the resources made. With
 * `bench:fleetOutputs`, it also returns what a Fleet of them returns, made by hand (their uuids, their
 * addresses, the catalogue's price of them all): bench/fleet-component.ts compares it with the Fleet.
 */
import * as pulumi from "@pulumi/pulumi";
import * as gpucloud from "pulumi-gpucloud";

/** What a Fleet returns, of instances declared one by one. */
async function fleetOutputs(instances: gpucloud.Instance[], podUuid: string, gpuUuid: string) {
  const [{ gpus }, { pods }] = await Promise.all([
    gpucloud.getGpus({ includeInvalid: true }),
    gpucloud.getPods(),
  ]);
  const each = gpucloud.estimateHourlyPrice({
    pod: pods.find((p) => p.podUuid === podUuid)!,
    gpu: gpus.find((g) => g.gpuUuid === gpuUuid)!,
    gpuNums: 1,
  });
  return {
    instanceUuids: pulumi.all(instances.map((i) => i.instanceUuid)),
    serverUrls: pulumi.all(instances.map((i) => i.serverUrls)),
    hourlyPrice: Math.round(each.amount * instances.length * 100) / 100,
  };
}

export = async () => {
  const config = new pulumi.Config("bench");
  const count = config.requireNumber("count", { min: 0 });
  const podUuid = config.require("podUuid");
  const gpuUuid = config.require("gpuUuid");
  // Changing it changes every title: an update of every Instance in place.
  const titlePrefix = config.get("titlePrefix") ?? "fleet";
  const instances: gpucloud.Instance[] = [];
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
    instances.push(instance);
  }
  if (!config.getBoolean("fleetOutputs")) return { count };
  return { count, ...(await fleetOutputs(instances, podUuid, gpuUuid)) };
};
