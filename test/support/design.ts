/**
 * Public names docs/design/contracts.md#resources fixes, which the classes, the dynamic providers and the
 * schema must all carry.
 */

export const INSTANCE_INPUTS = [
  "podUuid",
  "podTag",
  "imageUuid",
  "gpuUuid",
  "gpuNums",
  "title",
  "running",
  "shutdownAt",
  "waitTimeoutSeconds",
] as const;

export const INSTANCE_OUTPUTS = [
  "instanceUuid",
  "status",
  "statusName",
  "title",
  "serverUrls",
  "services",
  "sshPasswords",
  "gpuName",
  "gpuNums",
  "imageName",
  "imageTag",
  "createTime",
  "startTime",
  "chargingType",
  "shutdownRegular",
] as const;

export const IDLE_CLOSE_POLICY_INPUTS = [
  "instanceUuid",
  "idlePeriodMinutes",
  "destroyOnIdle",
  "gpuThreshold",
  "memoryThreshold",
] as const;
