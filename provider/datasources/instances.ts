import { z } from "zod";
import { collect, instanceStatusName, type Instance as RawInstance, type ServerMapEntry } from "../../sdk";
import { defineDataSource } from "../framework/define-data-source";
import type { InstanceService, InstanceSummary } from "../generated/data-sources";
import { connect, paging, withClient } from "./client";
import { withDefined } from "./shape";

const instanceService = z
  .object({
    title: z.string().describe("The service's title."),
    url: z.string().describe("The service's address."),
    portType: z.string().describe("`http` or `ssh`."),
    protocol: z.string().describe("`tcp` or `udp`."),
    ssh: z
      .object({
        host: z.string().describe("SSH host."),
        port: z.number().describe("SSH port."),
        username: z
          .string()
          .describe("SSH user; the password is in the Instance resource's secret sshPasswords."),
      })
      .optional()
      .describe("How to reach an `ssh` service; absent for others."),
  })
  .meta({
    id: "InstanceService",
    description:
      "An exposed service of an instance (an entry of its server_map). The SSH password is left out on\n" +
      "purpose: a data source result is not a secret, so it would land in plain text wherever the program\n" +
      "exports it. Read it from the Instance resource's `sshPasswords` output, which is a secret.",
  });

const instanceSummary = z
  .object({
    instanceUuid: z.string().describe("The instance's uuid."),
    status: z.number().describe("Numeric status (2 running, 4 stopped, ...; see statusName)."),
    statusName: z.string().describe("The status by name: `running`, `stopped`, ..."),
    title: z.string().describe('"" when the instance has no title.'),
    createTime: z.number().optional().describe("Unix seconds, when reported."),
    startTime: z.number().optional().describe("Unix seconds, when reported."),
    serverUrls: z.array(z.string()).describe("Addresses of its web services."),
    services: z.array(instanceService).describe("Its exposed services."),
    gpuUuid: z.string().optional().describe("GPU model uuid, when reported."),
    gpuName: z.string().optional().describe("GPU model name, when reported."),
    gpuNums: z.number().optional().describe("Number of GPUs, when reported."),
    imageUuid: z
      .string()
      .optional()
      .describe("The uuid of the image (or pod) it was created from, when reported."),
    imageName: z.string().optional().describe("Image name, when reported."),
    imageTag: z.string().optional().describe("Image version tag, when reported."),
    chargingType: z
      .number()
      .optional()
      .describe("Billing type; the API does not publish the meaning of its values."),
    shutdownRegular: z
      .object({
        enable: z.boolean().describe("Whether it is set."),
        shutdownTime: z.number().describe("When, Unix seconds."),
      })
      .optional()
      .describe("Scheduled shutdown, when the cloud reports one."),
    idleClose: z
      .object({
        idlePeriodMinutes: z.number().describe("How long every GPU must stay idle, in minutes."),
        destroy: z.boolean().describe("Whether the instance is destroyed, not only shut down."),
        gpuThreshold: z.number().describe("GPU utilisation threshold in percent (0: the platform's)."),
        memoryThreshold: z
          .number()
          .describe("Video-memory utilisation threshold in percent (0: the platform's)."),
      })
      .optional()
      .describe(
        "The idle-close rule, when the cloud reports one (the emulator does; the API does not document it).",
      ),
    saveImageStatus: z
      .number()
      .optional()
      .describe("1 uploading, 2 saved, 3 failed, when an image was saved from the instance."),
  })
  .meta({
    id: "InstanceSummary",
    description: "One of the caller's instances as /instance/list reports it.",
  });

export const getInstancesSource = defineDataSource({
  name: "getInstances",
  description:
    "Lists every instance of the caller, walking every page. Never cached: the program's own\n" +
    "resources create and destroy instances while it runs, so each call reads the cloud afresh.",
  example: [
    "const { instances } = await gpucloud.getInstances();",
    'const running = instances.filter((i) => i.statusName === "running").length;',
  ].join("\n"),
  result: z.object({ instances: z.array(instanceSummary).describe("Every instance of the caller.") }),
  async read(_args, opts) {
    const connection = connect(opts);
    const pages = paging(opts);
    const raw = await withClient(connection, (client) => collect(client.instances.listAll(pages)));
    return { instances: raw.map(toInstanceSummary) };
  },
});

function toInstanceSummary(raw: RawInstance): InstanceSummary {
  return withDefined({
    instanceUuid: raw.instance_uuid,
    status: raw.status,
    statusName: instanceStatusName(raw.status),
    title: raw.title ?? "",
    createTime: raw.create_time,
    startTime: raw.start_time,
    serverUrls: [...(raw.server_url ?? [])],
    services: (raw.server_map ?? []).map(toService),
    gpuUuid: raw.gpu_uuid,
    gpuName: raw.gpu_name,
    gpuNums: raw.gpu_nums,
    imageUuid: raw.image_uuid,
    imageName: raw.image_name,
    imageTag: raw.image_tag,
    chargingType: raw.charging_type,
    shutdownRegular: raw.shutdown_regular && {
      enable: raw.shutdown_regular.enable,
      shutdownTime: raw.shutdown_regular.shutdown_time,
    },
    idleClose: raw.idle_close
      ? {
          idlePeriodMinutes: raw.idle_close.idle_period_minutes,
          destroy: raw.idle_close.destroy,
          gpuThreshold: raw.idle_close.idle_gpu_threshold,
          memoryThreshold: raw.idle_close.idle_fb_threshold,
        }
      : undefined,
    saveImageStatus: raw.save_image_status,
  });
}

function toService(raw: ServerMapEntry): InstanceService {
  return withDefined({
    title: raw.title ?? "",
    url: raw.url ?? "",
    portType: raw.port_type ?? "",
    protocol: raw.protocol ?? "",
    ssh: raw.ssh_info && {
      host: raw.ssh_info.host,
      port: raw.ssh_info.port,
      username: raw.ssh_info.username,
    },
  });
}
