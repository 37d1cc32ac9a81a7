/**
 * bench/fleet-program.ts's fleet as one Fleet component (bench/fleet-component.ts compares the two):
 * `bench:count` members of one pod and GPU from config, each with an idle policy, and the Fleet's outputs.
 */
import * as pulumi from "@pulumi/pulumi";
import * as gpucloud from "pulumi-gpucloud";

export = async () => {
  const config = new pulumi.Config("bench");
  const fleet = new gpucloud.Fleet("fleet", {
    size: config.requireNumber("count", { min: 0 }),
    podUuid: config.require("podUuid"),
    gpuUuid: config.require("gpuUuid"),
    gpuNums: 1,
    idlePeriodMinutes: 120,
  });
  return {
    instanceUuids: fleet.instanceUuids,
    serverUrls: fleet.serverUrls,
    hourlyPrice: fleet.hourlyPrice,
  };
};
