import * as pulumi from "@pulumi/pulumi";
import { collect, instanceStatusName, type Instance as RawInstance, type ServerMapEntry } from "../../sdk";
import { connect, liftCall, paging, withClient } from "./client";
import type { DataSourceOptions } from "./options";
import { withDefined } from "./shape";

/**
 * An exposed service of an instance (an entry of its server_map). The SSH password is left out on
 * purpose: a data source result is not a secret, so it would land in plain text wherever the program
 * exports it. Read it from the Instance resource's `sshPasswords` output, which is a secret.
 */
export interface InstanceService {
  /** The service's title. */
  title: string;
  /** The service's address. */
  url: string;
  /** `http` or `ssh`. */
  portType: string;
  /** `tcp` or `udp`. */
  protocol: string;
  /** How to reach an `ssh` service; absent for others. */
  ssh?: {
    /** SSH host. */
    host: string;
    /** SSH port. */
    port: number;
    /** SSH user; the password is in the Instance resource's secret sshPasswords. */
    username: string;
  };
}

/** One of the caller's instances as /instance/list reports it. */
export interface InstanceSummary {
  /** The instance's uuid. */
  instanceUuid: string;
  /** Numeric status (2 running, 4 stopped, ...; see statusName). */
  status: number;
  /** The status by name: `running`, `stopped`, ... */
  statusName: string;
  /** "" when the instance has no title. */
  title: string;
  /** Unix seconds, when reported. */
  createTime?: number;
  /** Unix seconds, when reported. */
  startTime?: number;
  /** Addresses of its web services. */
  serverUrls: string[];
  /** Its exposed services. */
  services: InstanceService[];
  /** GPU model uuid, when reported. */
  gpuUuid?: string;
  /** GPU model name, when reported. */
  gpuName?: string;
  /** Number of GPUs, when reported. */
  gpuNums?: number;
  /** The uuid of the image (or pod) it was created from, when reported. */
  imageUuid?: string;
  /** Image name, when reported. */
  imageName?: string;
  /** Image version tag, when reported. */
  imageTag?: string;
  /** Billing type; the API does not publish the meaning of its values. */
  chargingType?: number;
  /** Scheduled shutdown, when the cloud reports one. */
  shutdownRegular?: {
    /** Whether it is set. */
    enable: boolean;
    /** When, Unix seconds. */
    shutdownTime: number;
  };
  /** The idle-close rule, when the cloud reports one (the emulator does; the API does not document it). */
  idleClose?: {
    /** How long every GPU must stay idle, in minutes. */
    idlePeriodMinutes: number;
    /** Whether the instance is destroyed, not only shut down. */
    destroy: boolean;
    /** GPU utilisation threshold in percent (0: the platform's). */
    gpuThreshold: number;
    /** Video-memory utilisation threshold in percent (0: the platform's). */
    memoryThreshold: number;
  };
  /** 1 uploading, 2 saved, 3 failed, when an image was saved from the instance. */
  saveImageStatus?: number;
}

export interface GetInstancesResult {
  /** Every instance of the caller. */
  instances: InstanceSummary[];
}

/**
 * Lists every instance of the caller, walking every page. Never cached: the program's own
 * resources create and destroy instances while it runs, so each call reads the cloud afresh.
 *
 * @example
 * const { instances } = await gpucloud.getInstances();
 * const running = instances.filter((i) => i.statusName === "running").length;
 */
export async function getInstances(opts?: DataSourceOptions): Promise<GetInstancesResult> {
  const connection = connect(opts);
  const pages = paging(opts);
  const raw = await withClient(connection, (client) => collect(client.instances.listAll(pages)));
  return { instances: raw.map(toInstanceSummary) };
}

/** `getInstances` as an Output. */
export function getInstancesOutput(opts?: DataSourceOptions): pulumi.Output<GetInstancesResult> {
  return liftCall(() => getInstances(opts));
}

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
