/** Instances: create, list, inspect, rename, power, schedules, idle-close, save as image, destroy. */
import { z } from "zod";
import { goneCountsAsDone, inputValidationError, type InputIssue } from "./errors";
import { paginate, DEFAULT_PAGE_SIZE, type PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { requireString } from "./validation";
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

function checkGpuNums(issues: InputIssue[], gpuNums: unknown): void {
  if (!(GPU_NUMS as readonly unknown[]).includes(gpuNums)) {
    issues.push({
      field: "gpu_nums",
      reason: `must be one of ${GPU_NUMS.join(", ")}, got ${JSON.stringify(gpuNums)}`,
    });
  }
}

function checkPercent(issues: InputIssue[], field: string, value: unknown): void {
  if (
    value !== undefined &&
    !(Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 100)
  ) {
    issues.push({ field, reason: `must be an integer from 0 to 100, got ${JSON.stringify(value)}` });
  }
}

export class Instances {
  constructor(private readonly transport: Transport) {}

  private ensure(action: string, path: string, issues: InputIssue[]): void {
    if (issues.length > 0) throw inputValidationError({ action, method: "POST", path }, issues);
  }

  /** create_by_pod. Never retried once sent: a lost answer becomes OutcomeUnknownError. */
  createByPod(params: CreateByPodParams, options: CallOptions = {}): Promise<Instance> {
    return this.create("pod", params.pod_uuid, params, options);
  }

  /** create_by_image. Never retried once sent: a lost answer becomes OutcomeUnknownError. */
  createByImage(params: CreateByImageParams, options: CallOptions = {}): Promise<Instance> {
    return this.create("image", params.image_uuid, params, options);
  }

  /** Both create paths: checked before sending, sent once (`unsafe`), a lost answer reconciled by the caller. */
  private async create(
    source: "pod" | "image",
    sourceUuid: string,
    params: CreateByPodParams | CreateByImageParams,
    options: CallOptions,
  ): Promise<Instance> {
    const path = `/instance/create_by_${source}`;
    const issues: InputIssue[] = [];
    requireString(issues, `${source}_uuid`, sourceUuid);
    requireString(issues, "gpu_uuid", params.gpu_uuid);
    checkGpuNums(issues, params.gpu_nums);
    this.ensure(`create instance from ${source}`, path, issues);
    return this.transport.call(
      {
        method: "POST",
        path,
        json: params,
        safety: "unsafe",
        action: `create instance from ${source} ${sourceUuid}`,
        schema: InstanceSchema,
        reconcile: RECONCILE_CREATE,
      },
      options,
    );
  }

  list(params: { page?: number; page_size?: number } = {}, options: CallOptions = {}): Promise<InstanceList> {
    return this.transport.call(
      {
        method: "GET",
        path: "/instance/list",
        query: { page: params.page, page_size: params.page_size },
        safety: "read",
        action: "list instances",
        schema: InstanceListSchema,
      },
      options,
    );
  }

  listAll(options: PaginateOptions = {}): AsyncIterable<Instance> {
    return paginate(
      async (page, page_size) => {
        const res = await this.list({ page, page_size }, options);
        return { items: res.instance_list, total: res.total };
      },
      { pageSize: DEFAULT_PAGE_SIZE, ...options },
      { action: "list instances", method: "GET", path: "/instance/list" },
    );
  }

  /** NotFoundError when the instance is gone or belongs to another user. */
  info(instance_uuid: string, options: CallOptions = {}): Promise<Instance> {
    return this.transport.call(
      {
        method: "GET",
        path: "/instance/info",
        query: { instance_uuid },
        safety: "read",
        action: `read instance ${instance_uuid}`,
        schema: InstanceSchema,
      },
      options,
    );
  }

  async updateTitle(instance_uuid: string, title: string, options: CallOptions = {}): Promise<void> {
    if (typeof title !== "string" || [...title].length > TITLE_MAX) {
      this.ensure(`rename instance ${instance_uuid}`, "/instance/update_title", [
        { field: "title", reason: `must be a string of at most ${TITLE_MAX} characters` },
      ]);
    }
    await this.transport.call(
      {
        method: "POST",
        path: "/instance/update_title",
        json: { instance_uuid, title },
        safety: "idempotent",
        action: `rename instance ${instance_uuid}`,
        schema: NoData,
      },
      options,
    );
  }

  /** Irreversible. An instance that is already gone counts as destroyed. */
  async destroy(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    await goneCountsAsDone(
      this.transport.call(
        {
          method: "POST",
          path: "/instance/destroy",
          json: { instance_uuid },
          safety: "idempotent",
          action: `destroy instance ${instance_uuid}`,
          schema: NoData,
        },
        options,
      ),
    );
  }

  async setIdleClose(params: SetIdleCloseParams, options: CallOptions = {}): Promise<void> {
    const issues: InputIssue[] = [];
    requireString(issues, "instance_uuid", params.instance_uuid);
    if (!(IDLE_PERIODS as readonly unknown[]).includes(params.idle_period_minutes)) {
      issues.push({
        field: "idle_period_minutes",
        reason: `must be one of ${IDLE_PERIODS.join(", ")}, got ${JSON.stringify(params.idle_period_minutes)}`,
      });
    }
    checkPercent(issues, "idle_gpu_threshold", params.idle_gpu_threshold);
    checkPercent(issues, "idle_fb_threshold", params.idle_fb_threshold);
    this.ensure(`set idle-close on instance ${params.instance_uuid}`, "/instance/set_idle_close", issues);
    await this.transport.call(
      {
        method: "POST",
        path: "/instance/set_idle_close",
        json: params,
        safety: "idempotent",
        action: `set idle-close on instance ${params.instance_uuid}`,
        schema: NoData,
      },
      options,
    );
  }

  // docs/design/live-service-notes.md#power-and-schedule-calls
  /** Start a shut-down instance, optionally on another GPU. */
  async startup(instance_uuid: string, params: StartupParams = {}, options: CallOptions = {}): Promise<void> {
    if (params.gpu_nums !== undefined) {
      const issues: InputIssue[] = [];
      checkGpuNums(issues, params.gpu_nums);
      this.ensure(`start instance ${instance_uuid}`, "/instance/startup", issues);
    }
    await this.power(
      "/instance/startup",
      `start instance ${instance_uuid}`,
      { instance_uuid, ...params },
      options,
    );
  }

  async shutdown(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    await this.power("/instance/shutdown", `shut down instance ${instance_uuid}`, { instance_uuid }, options);
  }

  async restart(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    await this.power("/instance/restart", `restart instance ${instance_uuid}`, { instance_uuid }, options);
  }

  /** Schedule (or with enable=false / shutdown_time=0, cancel) a shutdown. Repeating it is harmless. */
  async shutdownTimer(
    instance_uuid: string,
    params: ShutdownTimerParams,
    options: CallOptions = {},
  ): Promise<void> {
    const issues: InputIssue[] = [];
    if (typeof params.enable !== "boolean") issues.push({ field: "enable", reason: "must be a boolean" });
    if (!Number.isInteger(params.shutdown_time) || params.shutdown_time < 0) {
      issues.push({ field: "shutdown_time", reason: "must be Unix seconds (a non-negative integer)" });
    }
    this.ensure(`schedule shutdown of instance ${instance_uuid}`, "/instance/shutdown_timer", issues);
    await this.transport.call(
      {
        method: "POST",
        path: "/instance/shutdown_timer",
        json: { instance_uuid, ...params },
        safety: "idempotent",
        action: `schedule shutdown of instance ${instance_uuid}`,
        schema: NoData,
      },
      options,
    );
  }

  /** Start saving the instance as a personal image; follow it with client.images.waitForSaved. */
  async saveImage(instance_uuid: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call(
      {
        method: "POST",
        path: "/instance/save_image",
        json: { instance_uuid },
        safety: "unsafe",
        action: `save instance ${instance_uuid} as an image`,
        schema: NoData,
        reconcile:
          "List your personal images (client.images.list) and read the instance's save_image_status before saving again.",
      },
      options,
    );
  }

  /** Poll /instance/info until the status is one of `statuses`. */
  waitForStatus(instance_uuid: string, statuses: number[], options: WaitOptions = {}): Promise<Instance> {
    const wanted = statuses.map((s) => `${s} (${instanceStatusName(s)})`).join(" or ");
    return pollUntil(
      {
        description: `instance ${instance_uuid} to reach status ${wanted}`,
        action: `wait for instance ${instance_uuid}`,
        method: "GET",
        path: `/instance/info?instance_uuid=${instance_uuid}`,
        poll: (call) => this.info(instance_uuid, call),
        describeState: (i) => `status ${i.status} (${instanceStatusName(i.status)})`,
        isDone: (i) => statuses.includes(i.status),
      },
      options,
    );
  }

  private async power(
    path: string,
    action: string,
    body: Record<string, unknown>,
    options: CallOptions,
  ): Promise<void> {
    await this.transport.call(
      {
        method: "POST",
        path,
        json: body,
        safety: "unsafe",
        action,
        schema: NoData,
        reconcile: RECONCILE_POWER,
      },
      options,
    );
  }
}
