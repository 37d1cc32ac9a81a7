/** Instances: create, list, inspect, rename, power, schedules, idle-close, save as image, destroy. */
import { z } from "zod";
import { endpoint, pathOf, send, walk } from "./endpoints";
import type { InputIssue } from "./errors";
import type { PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { issuesOf, oneOf, required, rule, type Verdict } from "./validation";
import { pollUntil, type WaitOptions } from "./waiters";
import { int, listOf, NoData, whenSet } from "./zod-helpers";

export const ServerMapEntrySchema = z.looseObject({
  title: whenSet(z.string()),
  url: whenSet(z.string()),
  port_type: whenSet(z.string()).describe("http or ssh"),
  protocol: whenSet(z.string()).describe("tcp or udp"),
  ssh_info: whenSet(
    z.looseObject({
      host: z.string(),
      port: int,
      username: z.string(),
      password: z.string().describe("a credential: treat as secret"),
    }),
  ).describe("present only when port_type is ssh"),
});
export type ServerMapEntry = z.infer<typeof ServerMapEntrySchema>;

export const ShutdownRegularSchema = z.looseObject({
  shutdown_time: int.describe("Unix seconds"),
  enable: z.boolean(),
});

export const IdleCloseSchema = z.looseObject({
  idle_period_minutes: int,
  destroy: z.boolean(),
  idle_gpu_threshold: int,
  idle_fb_threshold: int,
});
export type IdleClose = z.infer<typeof IdleCloseSchema>;

export const InstanceSchema = z.looseObject({
  instance_uuid: z.string(),
  status: int.describe("see INSTANCE_STATUS_NAMES"),
  title: whenSet(z.string()),
  create_time: whenSet(int),
  start_time: whenSet(int),
  server_url: whenSet(z.array(z.string())).describe("list and info only"),
  server_map: whenSet(z.array(ServerMapEntrySchema)).describe("list and info only"),
  save_image_status: whenSet(int).describe("1 uploading, 2 succeeded, 3 failed"),
  charging_type: whenSet(int),
  shutdown_regular: whenSet(ShutdownRegularSchema),
  image_uuid: whenSet(z.string()),
  image_name: whenSet(z.string()),
  image_tag: whenSet(z.string()),
  gpu_uuid: whenSet(z.string()),
  gpu_name: whenSet(z.string()),
  gpu_nums: whenSet(int),
  // Not in the API: the emulator (and, per observation, the live service) reports the idle-close rule
  // (docs/design/cloud-api.md#what-the-api-leaves-unknown).
  idle_close: IdleCloseSchema.nullable().optional(),
});
export type Instance = z.infer<typeof InstanceSchema>;

export const InstanceListSchema = z.looseObject({
  instance_list: listOf(InstanceSchema),
  total: int,
});
export type InstanceList = z.infer<typeof InstanceListSchema>;

// docs/design/live-service-notes.md#instance-life
/** Status names as clients use them. */
export const INSTANCE_STATUS_NAMES: Readonly<Record<number, string>> = {
  0: "created",
  1: "initializing",
  2: "running",
  3: "shutting down",
  4: "stopped",
  21: "shutting down",
  22: "stopped",
  23: "stopped abnormally",
  24: "starting",
  27: "restarting",
};

export function instanceStatusName(status: number): string {
  return Object.hasOwn(INSTANCE_STATUS_NAMES, status)
    ? INSTANCE_STATUS_NAMES[status]
    : `unknown status ${status}`;
}

export const GPU_NUMS = [1, 2, 4, 8] as const;
export const IDLE_PERIODS = [0, 10, 30, 60, 120] as const;
export const TITLE_MAX = 50;

export interface CreateByPodParams {
  pod_uuid: string;
  pod_tag?: string;
  gpu_uuid: string;
  gpu_nums: number;
}

export interface CreateByImageParams {
  image_uuid: string;
  gpu_uuid: string;
  gpu_nums: number;
}

export interface SetIdleCloseParams {
  instance_uuid: string;
  idle_period_minutes: number;
  destroy?: boolean;
  idle_gpu_threshold?: number;
  idle_fb_threshold?: number;
}

export interface StartupParams {
  gpu_uuid?: string;
  gpu_nums?: number;
}

export interface ShutdownTimerParams {
  enable: boolean;
  shutdown_time: number;
}

const RECONCILE_CREATE =
  "List your instances (client.instances.listAll()) and adopt or destroy any instance you do not recognise before creating again.";
const RECONCILE_POWER = "Read the instance (client.instances.info) to see its status before trying again.";

function percentRule(field: string, value: unknown): Verdict {
  const holds =
    value === undefined || (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 100);
  return rule(field, holds, `must be an integer from 0 to 100, got ${JSON.stringify(value)}`);
}

/** Both create paths: the source's uuid (`pod_uuid` or `image_uuid`), the GPU model and count. */
function createIssues(
  sourceField: string,
  sourceUuid: string,
  params: CreateByImageParams | CreateByPodParams,
): InputIssue[] {
  const { gpu_uuid, gpu_nums } = params;
  return issuesOf(required(sourceField, sourceUuid), required("gpu_uuid", gpu_uuid), gpuNumsRule(gpu_nums));
}

function gpuNumsRule(value: unknown): Verdict {
  return oneOf("gpu_nums", GPU_NUMS, value);
}

function titleRule(value: unknown): Verdict {
  const holds = typeof value === "string" && [...value].length <= TITLE_MAX;
  return rule("title", holds, `must be a string of at most ${TITLE_MAX} characters`);
}

function idleCloseIssues(params: SetIdleCloseParams): InputIssue[] {
  return issuesOf(
    required("instance_uuid", params.instance_uuid),
    oneOf("idle_period_minutes", IDLE_PERIODS, params.idle_period_minutes),
    percentRule("idle_gpu_threshold", params.idle_gpu_threshold),
    percentRule("idle_fb_threshold", params.idle_fb_threshold),
  );
}

function timerIssues({ enable, shutdown_time }: ShutdownTimerParams): InputIssue[] {
  return issuesOf(
    rule("enable", typeof enable === "boolean", "must be a boolean"),
    rule(
      "shutdown_time",
      Number.isInteger(shutdown_time) && shutdown_time >= 0,
      "must be Unix seconds (a non-negative integer)",
    ),
  );
}

/** Every endpoint of the area, once. Creates and power calls are `unsafe`: sent once, never resent. */
const ENDPOINTS = {
  createByPod: endpoint("POST /instance/create_by_pod", "unsafe", InstanceSchema, {
    action: (p: CreateByPodParams) => `create instance from pod ${p.pod_uuid}`,
    checkAction: "create instance from pod",
    request: (p) => ({ issues: createIssues("pod_uuid", p.pod_uuid, p), json: p }),
    reconcile: RECONCILE_CREATE,
  }),
  createByImage: endpoint("POST /instance/create_by_image", "unsafe", InstanceSchema, {
    action: (p: CreateByImageParams) => `create instance from image ${p.image_uuid}`,
    checkAction: "create instance from image",
    request: (p) => ({ issues: createIssues("image_uuid", p.image_uuid, p), json: p }),
    reconcile: RECONCILE_CREATE,
  }),
  list: endpoint("GET /instance/list", "read", InstanceListSchema, {
    action: "list instances",
    request: ({ page, page_size }: { page?: number; page_size?: number }) => ({ query: { page, page_size } }),
    items: "instance_list",
  }),
  info: endpoint("GET /instance/info", "read", InstanceSchema, {
    action: (instance_uuid: string) => `read instance ${instance_uuid}`,
    request: (instance_uuid) => ({ query: { instance_uuid } }),
  }),
  updateTitle: endpoint("POST /instance/update_title", "idempotent", NoData, {
    action: (instance_uuid: string, _title: string) => `rename instance ${instance_uuid}`,
    request: (instance_uuid, title) => ({
      issues: issuesOf(titleRule(title)),
      json: { instance_uuid, title },
    }),
  }),
  destroy: endpoint("POST /instance/destroy", "idempotent", NoData, {
    action: (instance_uuid: string) => `destroy instance ${instance_uuid}`,
    request: (instance_uuid) => ({ json: { instance_uuid } }),
    goneIsDone: true,
  }),
  setIdleClose: endpoint("POST /instance/set_idle_close", "idempotent", NoData, {
    action: (p: SetIdleCloseParams) => `set idle-close on instance ${p.instance_uuid}`,
    request: (p) => ({ issues: idleCloseIssues(p), json: p }),
  }),
  startup: endpoint("POST /instance/startup", "unsafe", NoData, {
    action: (instance_uuid: string, _params: StartupParams) => `start instance ${instance_uuid}`,
    request: (instance_uuid, params) => ({
      issues: params.gpu_nums === undefined ? [] : issuesOf(gpuNumsRule(params.gpu_nums)),
      json: { instance_uuid, ...params },
    }),
    reconcile: RECONCILE_POWER,
  }),
  shutdown: endpoint("POST /instance/shutdown", "unsafe", NoData, {
    action: (instance_uuid: string) => `shut down instance ${instance_uuid}`,
    request: (instance_uuid) => ({ json: { instance_uuid } }),
    reconcile: RECONCILE_POWER,
  }),
  restart: endpoint("POST /instance/restart", "unsafe", NoData, {
    action: (instance_uuid: string) => `restart instance ${instance_uuid}`,
    request: (instance_uuid) => ({ json: { instance_uuid } }),
    reconcile: RECONCILE_POWER,
  }),
  shutdownTimer: endpoint("POST /instance/shutdown_timer", "idempotent", NoData, {
    action: (instance_uuid: string, _params: ShutdownTimerParams) =>
      `schedule shutdown of instance ${instance_uuid}`,
    request: (instance_uuid, params) => ({ issues: timerIssues(params), json: { instance_uuid, ...params } }),
  }),
  saveImage: endpoint("POST /instance/save_image", "unsafe", NoData, {
    action: (instance_uuid: string) => `save instance ${instance_uuid} as an image`,
    request: (instance_uuid) => ({ json: { instance_uuid } }),
    reconcile:
      "List your personal images (client.images.list) and read the instance's save_image_status before saving again.",
  }),
};

export class Instances {
  constructor(private readonly transport: Transport) {}

  /** create_by_pod. Never retried once sent: a lost answer becomes OutcomeUnknownError. */
  createByPod(params: CreateByPodParams, options: CallOptions = {}): Promise<Instance> {
    return send(this.transport, ENDPOINTS.createByPod, [params], options);
  }

  /** create_by_image. Never retried once sent: a lost answer becomes OutcomeUnknownError. */
  createByImage(params: CreateByImageParams, options: CallOptions = {}): Promise<Instance> {
    return send(this.transport, ENDPOINTS.createByImage, [params], options);
  }

  list(params: { page?: number; page_size?: number } = {}, options: CallOptions = {}): Promise<InstanceList> {
    return send(this.transport, ENDPOINTS.list, [params], options);
  }

  listAll(options: PaginateOptions = {}): AsyncIterable<Instance> {
    return walk(this.transport, ENDPOINTS.list, {}, options);
  }

  /** NotFoundError when the instance is gone or belongs to another user. */
  info(instance_uuid: string, options: CallOptions = {}): Promise<Instance> {
    return send(this.transport, ENDPOINTS.info, [instance_uuid], options);
  }

  updateTitle(instance_uuid: string, title: string, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.updateTitle, [instance_uuid, title], options);
  }

  /** Irreversible. An instance that is already gone counts as destroyed. */
  destroy(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.destroy, [instance_uuid], options);
  }

  setIdleClose(params: SetIdleCloseParams, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.setIdleClose, [params], options);
  }

  // docs/design/live-service-notes.md#power-and-schedule-calls
  /** Start a shut-down instance, optionally on another GPU. */
  startup(instance_uuid: string, params: StartupParams = {}, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.startup, [instance_uuid, params], options);
  }

  shutdown(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.shutdown, [instance_uuid], options);
  }

  restart(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.restart, [instance_uuid], options);
  }

  /** Schedule (or with enable=false / shutdown_time=0, cancel) a shutdown. Repeating it is harmless. */
  shutdownTimer(
    instance_uuid: string,
    params: ShutdownTimerParams,
    options: CallOptions = {},
  ): Promise<void> {
    return send(this.transport, ENDPOINTS.shutdownTimer, [instance_uuid, params], options);
  }

  /** Start saving the instance as a personal image; follow it with client.images.waitForSaved. */
  saveImage(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.saveImage, [instance_uuid], options);
  }

  /** Poll /instance/info until the status is one of `statuses`. */
  waitForStatus(instance_uuid: string, statuses: number[], options: WaitOptions = {}): Promise<Instance> {
    const wanted = statuses.map((s) => `${s} (${instanceStatusName(s)})`).join(" or ");
    return pollUntil(
      {
        description: `instance ${instance_uuid} to reach status ${wanted}`,
        action: `wait for instance ${instance_uuid}`,
        method: ENDPOINTS.info.method,
        path: pathOf(ENDPOINTS.info, [instance_uuid]),
        poll: (call) => this.info(instance_uuid, call),
        describeState: (i) => `status ${i.status} (${instanceStatusName(i.status)})`,
        isDone: (i) => statuses.includes(i.status),
      },
      options,
    );
  }
}
