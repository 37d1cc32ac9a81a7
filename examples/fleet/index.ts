/**
 * A GPU fleet from stack config: `count` instances of one pod on one GPU model, each titled, watched
 * by an idle-close policy (unless `fleet:idlePolicy` is false) and ready only once its web services answer (`fleet:waitForServices`, default
 * true). Stack outputs: the service URLs, the SSH endpoints (secret) and the fleet's estimated hourly price.
 *
 *   pulumi config set fleet:count 3
 *   pulumi config set fleet:gpuModel 4090D
 *   pulumi up
 */
import * as pulumi from "@pulumi/pulumi";
import * as gpucloud from "pulumi-gpucloud";

interface SshEndpoint {
  command: string;
  password: string;
}

/** A numeric setting checked here, so a wrong value names the setting to fix rather than an input. */
function oneOf(key: string, value: number, allowed: number[]): number {
  if (!allowed.includes(value)) {
    throw new pulumi.RunError(`fleet:${key} is ${value}; it must be one of ${allowed.join(", ")}.`);
  }
  return value;
}

// An exported function is the program: the Pulumi CLI calls it and its result becomes the stack outputs.
export = async () => {
  const config = new pulumi.Config("fleet");
  const name = config.get("name") ?? "fleet";
  const count = config.getNumber("count", { min: 1, max: 20 }) ?? 2;
  const gpuModel = config.get("gpuModel") ?? "4090D";
  const gpuCount = oneOf("gpuCount", config.getNumber("gpuCount") ?? 1, [1, 2, 4, 8]);
  const podTitle = config.get("podTitle") ?? "ComfyUI";
  // Absent: the pod's latest tag when each instance is created (pinning it would replace the fleet on a new tag).
  const podTag = config.get("podTag");
  const idleMinutes = oneOf("idleMinutes", config.getNumber("idleMinutes") ?? 30, [10, 30, 60, 120]);
  // Off, nothing stops an idle instance: the cost guard policy pack reports each one (gpucloud-idle-shutdown).
  const idlePolicy = config.getBoolean("idlePolicy") ?? true;
  // A pod runs minutes before its web UI answers: the service URLs in the outputs are usable at once.
  const waitForServices = config.getBoolean("waitForServices") ?? true;

  const gpu = await gpucloud.getGpu({ name: gpuModel });
  const pod = await gpucloud.getPod({ title: podTitle, tag: podTag });

  const instances = Array.from({ length: count }, (_, index) => {
    const title = `${name}-${index}`;
    const instance = new gpucloud.Instance(title, {
      podUuid: pod.podUuid,
      podTag,
      gpuUuid: gpu.gpuUuid,
      gpuNums: gpuCount,
      title,
      waitForServices,
    });
    if (idlePolicy) {
      new gpucloud.IdleClosePolicy(`${title}-idle`, {
        instanceUuid: instance.instanceUuid,
        idlePeriodMinutes: idleMinutes,
      });
    }
    return { title, instance };
  });

  // One output keyed by instance title, from one output of each instance.
  const byTitle = <T>(pick: (i: gpucloud.Instance) => pulumi.Output<T>) =>
    pulumi
      .all(instances.map(({ title, instance }) => pick(instance).apply((value) => [title, value] as const)))
      .apply((entries) => Object.fromEntries(entries));

  const perInstance = gpucloud.estimateHourlyPrice({ pod, gpu, gpuNums: gpuCount });
  return {
    serviceUrls: byTitle((i) => i.serverUrls),
    sshEndpoints: pulumi.secret(
      byTitle((i) =>
        pulumi.all([i.services, i.sshPasswords]).apply(([services, passwords]) =>
          services
            .filter((s) => s.ssh !== null)
            .map((s): SshEndpoint => ({
              command: `ssh -p ${s.ssh!.port} ${s.ssh!.username}@${s.ssh!.host}`,
              password: passwords[s.title ?? ""] ?? "",
            })),
        ),
      ),
    ),
    // Known at preview, before anything is rented; the cost guard's budget policy adds up the same prices.
    hourlyPrice: {
      // Multiplying decimals leaves float noise (0.1 * 3): round to the fen.
      fleet: Math.round(perInstance.amount * count * 100) / 100,
      perInstance: perInstance.amount,
      currency: perInstance.currency,
      basis: `${count} x (${perInstance.basis})`,
    },
  };
};
