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
  title: string;
  url: string;
  /** `http` or `ssh`. */
  portType: string;
  /** `tcp` or `udp`. */
  protocol: string;
  /** Present for `ssh` services. */
  ssh?: { host: string; port: number; username: string };
}

/** One of the caller's instances as /instance/list reports it. */
export interface InstanceSummary {
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
  serverUrls: string[];
  services: InstanceService[];
  gpuUuid?: string;
  gpuName?: string;
  gpuNums?: number;
  imageUuid?: string;
  imageName?: string;
  imageTag?: string;
  /** Billing type; the API does not publish the meaning of its values. */
  chargingType?: number;
  /** Scheduled shutdown, when the cloud reports one. */
  shutdownRegular?: { enable: boolean; shutdownTime: number };
  /** The idle-close rule, when the cloud reports one (the emulator does; the API does not document it). */
  idleClose?: { idlePeriodMinutes: number; destroy: boolean; gpuThreshold: number; memoryThreshold: number };
  /** 1 uploading, 2 saved, 3 failed, when an image was saved from the instance. */
  saveImageStatus?: number;
}

export interface GetInstancesResult {
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
