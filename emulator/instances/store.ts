import Decimal from "decimal.js";
import { ApiError, businessError, notFound, paramError, wrongState } from "../core/errors";
import { newSecret } from "../core/ids";
import type { Wallet } from "../core/wallet";
import type { CatalogueStore } from "../catalogue/store";
import { marketImageName } from "../catalogue/seed";
import { SAVE_IMAGE_SECONDS, SAVE_STATUS, type ImagesStore } from "../images/store";

/** Instance status codes (api-v2.md, States and transitions; names from field-notes.md). */
export const STATUS = {
  CREATED: 0,
  STARTING: 1,
  RUNNING: 2,
  SHUTTING_DOWN_LEGACY: 3,
  STOPPED_LEGACY: 4,
  SHUTTING_DOWN: 21,
  STOPPED: 22,
  STOPPED_ABNORMAL: 23,
  RESTARTING_FROM_STOP: 24,
  RESTARTING: 27,
} as const;

/**
 * Power operations as data (field-notes.md, DESIGN §5): from which statuses an operation is allowed,
 * the status it passes through and the one it ends in after `seconds` of simulated time.
 */
export const INSTANCE_TRANSITIONS = {
  create: { from: [] as number[], via: STATUS.STARTING, to: STATUS.RUNNING, seconds: 60 },
  startup: {
    from: [STATUS.STOPPED_LEGACY, STATUS.STOPPED, STATUS.STOPPED_ABNORMAL] as number[],
    via: STATUS.RESTARTING_FROM_STOP,
    to: STATUS.RUNNING,
    seconds: 30,
  },
  shutdown: {
    from: [STATUS.RUNNING] as number[],
    via: STATUS.SHUTTING_DOWN,
    to: STATUS.STOPPED,
    seconds: 10,
  },
  restart: { from: [STATUS.RUNNING] as number[], via: STATUS.RESTARTING, to: STATUS.RUNNING, seconds: 20 },
} as const;

export type PowerOperation = keyof typeof INSTANCE_TRANSITIONS;

/** Statuses in which an instance is powered and billed by the hour. */
const BILLED_STATUSES: readonly number[] = [
  STATUS.STARTING,
  STATUS.RUNNING,
  STATUS.SHUTTING_DOWN_LEGACY,
  STATUS.SHUTTING_DOWN,
  STATUS.RESTARTING_FROM_STOP,
  STATUS.RESTARTING,
];

/** charging_type values are not shown (api-v2.md, Instance); the emulator's choice: 1 hourly, 2 subscription. */
export const CHARGING_TYPE = { PAY_AS_YOU_GO: 1, SUBSCRIPTION: 2 } as const;

export const GPU_NUMS = [1, 2, 4, 8] as const;
export const TITLE_MAX = 50;
export const BILLING_PERIOD_SECONDS = 3600;

/** Idle-close (api-v2.md, set_idle_close). */
export const IDLE_PERIODS = [0, 10, 30, 60, 120] as const;
export const IDLE_CHECK_SECONDS = 60;
/** Threshold 0 means "the platform-wide threshold", whose value is not shown; the emulator uses 5 %. */
export const PLATFORM_IDLE_THRESHOLD = 5;
/** Threshold 100 skips that check (api-v2.md, set_idle_close). */
export const SKIP_THRESHOLD = 100;

/**
 * The idle policy as list/info show it in `idle_close`. api-v2.md has no read-back of the policy; the
 * emulator adds this field so refresh can see drift (DESIGN §3, IdleClosePolicy: "when the API reports it").
 */
export interface IdlePolicy {
  idle_period_minutes: number;
  destroy: boolean;
  idle_gpu_threshold: number;
  idle_fb_threshold: number;
}

export interface Utilization {
  gpu: number;
  fb: number;
}

interface SshInfo {
  host: string;
  port: number;
  username: string;
  password: string;
}

interface InstanceRecord {
  instance_uuid: string;
  owner: string;
  title: string;
  status: number;
  /** The pending status change, if any: the clock applies it at `at`. */
  next: { status: number; at: number } | null;
  create_time: number;
  start_time: number;
  image_uuid: string;
  image_name: string;
  image_tag: string;
  pod_uuid: string;
  pod_tag: string;
  gpu_uuid: string;
  gpu_name: string;
  gpu_nums: number;
  charging_type: number;
  shutdown_regular: { shutdown_time: number; enable: boolean };
  /** 0 until the first save_image (the spec defines only 1, 2 and 3; 0 is the emulator's "never saved"). */
  save_image_status: number;
  save_image_next: { save_image_status: number; at: number } | null;
  idle_close: IdlePolicy | null;
  idle_since: number | null;
  idle_next_check_at: number | null;
  utilization: Utilization[];
  /** Start of the not yet charged part of the current powered period; null when not billed. */
  billed_until: number | null;
  ssh: SshInfo;
  http_host: string;
}

export type CreatedInstance = Pick<
  InstanceRecord,
  | "instance_uuid"
  | "title"
  | "status"
  | "create_time"
  | "start_time"
  | "save_image_status"
  | "charging_type"
  | "shutdown_regular"
  | "image_uuid"
  | "image_name"
  | "image_tag"
  | "gpu_uuid"
  | "gpu_name"
  | "gpu_nums"
>;

export interface ServerMapEntry {
  title: string;
  url: string;
  port_type: "http" | "ssh";
  protocol: "tcp" | "udp";
  ssh_info?: SshInfo;
}

export type InstanceView = CreatedInstance & {
  server_url: string[];
  server_map: ServerMapEntry[];
  idle_close: IdlePolicy | null;
};

interface Source {
  image_uuid: string;
  image_name: string;
  image_tag: string;
  pod_uuid: string;
  pod_tag: string;
}

/** Instances: creation, power state machine, schedules, idle-close and hourly billing. */
export class InstancesStore {
  private instances = new Map<string, InstanceRecord>();

  constructor(
    private readonly now: () => number,
    private readonly nextId: (prefix: string) => string,
    private readonly wallet: Wallet,
    private readonly catalogue: CatalogueStore,
    private readonly images: ImagesStore,
  ) {}

  createByPod(
    owner: string,
    input: { pod_uuid: string; pod_tag?: string; gpu_uuid: string; gpu_nums: number },
  ): CreatedInstance {
    const pod = this.catalogue.pod(input.pod_uuid);
    if (!pod) throw paramError("pod_uuid", `no pod ${input.pod_uuid}; pick one from /pod/list`);
    const tag = input.pod_tag ?? pod.pod_tag[pod.pod_tag.length - 1];
    if (!pod.pod_tag.includes(tag)) {
      throw paramError("pod_tag", `pod ${pod.title} has no tag ${tag}; use one of ${pod.pod_tag.join(", ")}`);
    }
    return this.create(owner, input, {
      image_uuid: pod.uuid,
      image_name: pod.title,
      image_tag: tag,
      pod_uuid: pod.uuid,
      pod_tag: tag,
    });
  }

  createByImage(
    owner: string,
    input: { image_uuid: string; gpu_uuid: string; gpu_nums: number },
  ): CreatedInstance {
    const market = this.catalogue.marketImage(input.image_uuid);
    if (market) {
      return this.create(owner, input, {
        image_uuid: market.uuid,
        image_name: marketImageName(market),
        image_tag: "latest",
        pod_uuid: "",
        pod_tag: "",
      });
    }
    const personal = this.images.find(owner, input.image_uuid);
    if (!personal) throw paramError("image_uuid", `no market image or personal image ${input.image_uuid}`);
    if (personal.save_image_status !== SAVE_STATUS.SUCCEEDED) {
      throw paramError(
        "image_uuid",
        `image ${personal.uuid} is not ready (save_image_status ${personal.save_image_status}); wait until it is 2`,
      );
    }
    return this.create(owner, input, {
      image_uuid: personal.uuid,
      image_name: personal.title,
      image_tag: personal.pod_tag,
      pod_uuid: personal.pod_uuid,
      pod_tag: personal.pod_tag,
    });
  }

  list(owner: string): InstanceView[] {
    return [...this.instances.values()].filter((i) => i.owner === owner).map(fullView);
  }

  info(owner: string, instanceUuid: string): InstanceView {
    return fullView(this.owned(owner, instanceUuid));
  }

  /** update_title answers code 1 (not -1) for a missing, deleted or foreign instance (api-v2.md, update_title failures). */
  updateTitle(owner: string, instanceUuid: string, title: string): void {
    const instance = this.instances.get(instanceUuid);
    if (!instance || instance.owner !== owner)
      throw new ApiError(404, 1, `instance not found: ${instanceUuid}`);
    instance.title = title;
  }

  destroy(owner: string, instanceUuid: string): void {
    const instance = this.owned(owner, instanceUuid);
    this.remove(instance);
  }

  startup(owner: string, instanceUuid: string, gpu?: { gpu_uuid?: string; gpu_nums?: number }): void {
    const instance = this.owned(owner, instanceUuid);
    this.requireFrom(instance, "startup");
    if (gpu?.gpu_uuid !== undefined || gpu?.gpu_nums !== undefined) {
      const model = this.catalogue.usableGpu(gpu.gpu_uuid ?? instance.gpu_uuid);
      const nums = gpu.gpu_nums ?? instance.gpu_nums;
      this.requireFirstHour(owner, instance.pod_uuid, model.gpu_uuid, nums, instance.charging_type);
      instance.gpu_uuid = model.gpu_uuid;
      instance.gpu_name = model.gpu_name;
      instance.gpu_nums = nums;
      instance.utilization = idleGpus(nums);
    } else {
      this.requireFirstHour(
        owner,
        instance.pod_uuid,
        instance.gpu_uuid,
        instance.gpu_nums,
        instance.charging_type,
      );
    }
    this.begin(instance, "startup");
  }

  shutdown(owner: string, instanceUuid: string): void {
    const instance = this.owned(owner, instanceUuid);
    this.requireFrom(instance, "shutdown");
    this.begin(instance, "shutdown");
  }

  restart(owner: string, instanceUuid: string): void {
    const instance = this.owned(owner, instanceUuid);
    this.requireFrom(instance, "restart");
    this.begin(instance, "restart");
  }

  /** field-notes.md: only for a running instance; enable=false or shutdown_time=0 cancels. */
  shutdownTimer(owner: string, instanceUuid: string, enable: boolean, shutdownTime: number): void {
    const instance = this.owned(owner, instanceUuid);
    if (instance.status !== STATUS.RUNNING) throw notAllowed(instance, "shutdown_timer");
    if (!enable || shutdownTime === 0) {
      instance.shutdown_regular = { shutdown_time: 0, enable: false };
      return;
    }
    // Clients send a time at least 5 minutes ahead (field-notes.md); the emulator only requires the future.
    if (shutdownTime <= this.now())
      throw paramError("shutdown_time", `must be in the future (now is ${this.now()})`);
    instance.shutdown_regular = { shutdown_time: shutdownTime, enable: true };
  }

  /** Running or stopped instances can be saved (field-notes.md is silent on the states; the emulator's choice). */
  saveImage(owner: string, instanceUuid: string): void {
    const instance = this.owned(owner, instanceUuid);
    if (
      instance.status !== STATUS.RUNNING &&
      instance.status !== STATUS.STOPPED &&
      instance.status !== STATUS.STOPPED_LEGACY
    ) {
      throw notAllowed(instance, "save_image");
    }
    if (instance.save_image_status === SAVE_STATUS.UPLOADING) {
      throw wrongState(
        `instance ${instance.instance_uuid} is already saving an image (save_image_status 1); wait until it ends`,
      );
    }
    const image = this.images.startSave(owner, {
      title: `${instance.title || instance.image_name}-${this.now()}`,
      pod_uuid: instance.pod_uuid,
      pod_tag: instance.pod_tag,
      instance_uuid: instance.instance_uuid,
    });
    instance.save_image_status = SAVE_STATUS.UPLOADING;
    instance.save_image_next = {
      save_image_status: SAVE_STATUS.SUCCEEDED,
      at: image.create_time + SAVE_IMAGE_SECONDS,
    };
  }

  setIdleClose(owner: string, instanceUuid: string, input: IdlePolicy): void {
    const instance = this.owned(owner, instanceUuid);
    if (instance.status === STATUS.STOPPED_ABNORMAL) {
      throw wrongState(
        `instance ${instance.instance_uuid} is in an abnormal state (status 23); idle shutdown cannot be set`,
      );
    }
    if (input.idle_period_minutes === 0) {
      instance.idle_close = null;
    } else {
      if (input.destroy && instance.charging_type === CHARGING_TYPE.SUBSCRIPTION) {
        throw businessError(
          "destroy: destroy on idle is not supported for subscription instances; send destroy=false",
        );
      }
      instance.idle_close = { ...input };
    }
    // A new policy starts a new window: idleness measured under the old thresholds does not count.
    instance.idle_since = null;
    this.refreshIdle(instance, this.now());
    instance.idle_next_check_at =
      instance.idle_close && instance.status === STATUS.RUNNING ? this.now() + IDLE_CHECK_SECONDS : null;
  }

  /** Admin: what idle-close sees. `index` picks one GPU; without it every GPU gets the values. */
  setUtilization(instanceUuid: string, value: Utilization, index?: number): void {
    const instance = this.instances.get(instanceUuid);
    if (!instance) throw notFound("instance", instanceUuid);
    if (index !== undefined && index >= instance.gpu_nums) {
      throw paramError("index", `must be below gpu_nums (${instance.gpu_nums})`);
    }
    instance.utilization = instance.utilization.map((u, i) =>
      index === undefined || i === index ? { ...value } : u,
    );
    this.refreshIdle(instance, this.now());
  }

  /** Admin: puts an instance into states the API cannot reach (abnormal stop, subscription billing). */
  force(instanceUuid: string, change: { status?: number; charging_type?: number }): void {
    const instance = this.instances.get(instanceUuid);
    if (!instance) throw notFound("instance", instanceUuid);
    if (change.charging_type !== undefined) instance.charging_type = change.charging_type;
    if (change.status !== undefined) {
      instance.next = null;
      this.enter(instance, change.status, this.now());
    }
    if (instance.charging_type === CHARGING_TYPE.SUBSCRIPTION) instance.billed_until = null;
  }

  /** What an operator sees beyond the API's view (the web console): owner, price, utilisation, pending change. */
  adminView(instanceUuid: string): {
    owner: string;
    hourly_price: string;
    utilization: Utilization[];
    next: { status: number; at: number } | null;
  } {
    const instance = this.instances.get(instanceUuid);
    if (!instance) throw notFound("instance", instanceUuid);
    return {
      owner: instance.owner,
      hourly_price: this.hourlyPrice(instance.pod_uuid, instance.gpu_uuid, instance.gpu_nums).toFixed(),
      utilization: instance.utilization.map((u) => ({ ...u })),
      next: instance.next ? { ...instance.next } : null,
    };
  }

  nextDueAt(): number | undefined {
    let earliest: number | undefined;
    for (const instance of this.instances.values()) {
      for (const at of dueTimes(instance)) {
        if (earliest === undefined || at < earliest) earliest = at;
      }
    }
    return earliest;
  }

  /** Runs what is due at `now`, per instance in this order: status change, image save, charge, timer, idle check. */
  runDue(now: number): void {
    for (const instance of [...this.instances.values()]) {
      if (instance.next && instance.next.at <= now) {
        const { status } = instance.next;
        instance.next = null;
        this.enter(instance, status, now);
      }
      if (instance.save_image_next && instance.save_image_next.at <= now) {
        instance.save_image_status = instance.save_image_next.save_image_status;
        instance.save_image_next = null;
      }
      if (instance.billed_until !== null && instance.billed_until + BILLING_PERIOD_SECONDS <= now) {
        this.chargeHour(instance);
      }
      if (instance.shutdown_regular.enable && instance.shutdown_regular.shutdown_time <= now) {
        instance.shutdown_regular = { ...instance.shutdown_regular, enable: false };
        if (instance.status === STATUS.RUNNING) this.begin(instance, "shutdown");
      }
      if (instance.idle_next_check_at !== null && instance.idle_next_check_at <= now) {
        this.checkIdle(instance, now);
      }
    }
  }

  snapshot(): InstanceRecord[] {
    return [...this.instances.values()];
  }

  restore(state: unknown): void {
    this.instances = new Map((state as InstanceRecord[]).map((i) => [i.instance_uuid, i]));
  }

  reset(): void {
    this.instances.clear();
  }

  private create(
    owner: string,
    input: { gpu_uuid: string; gpu_nums: number },
    source: Source,
  ): CreatedInstance {
    const gpu = this.catalogue.usableGpu(input.gpu_uuid);
    this.requireFirstHour(owner, source.pod_uuid, gpu.gpu_uuid, input.gpu_nums, CHARGING_TYPE.PAY_AS_YOU_GO);
    const now = this.now();
    const uuid = this.nextId("ins");
    const short = uuid.slice(-8);
    const transition = INSTANCE_TRANSITIONS.create;
    const instance: InstanceRecord = {
      instance_uuid: uuid,
      owner,
      title: "",
      status: transition.via,
      next: { status: transition.to, at: now + transition.seconds },
      create_time: now,
      start_time: 0,
      ...source,
      gpu_uuid: gpu.gpu_uuid,
      gpu_name: gpu.gpu_name,
      gpu_nums: input.gpu_nums,
      charging_type: CHARGING_TYPE.PAY_AS_YOU_GO,
      shutdown_regular: { shutdown_time: 0, enable: false },
      save_image_status: 0,
      save_image_next: null,
      idle_close: null,
      idle_since: null,
      idle_next_check_at: null,
      utilization: idleGpus(input.gpu_nums),
      billed_until: now,
      ssh: {
        host: `ssh-${short}.gpucloud.local`,
        port: 20000 + (parseInt(short, 16) % 40000),
        username: "root",
        password: newSecret(),
      },
      http_host: `${short}-8888.gpucloud.local`,
    };
    this.instances.set(uuid, instance);
    return createdView(instance);
  }

  private owned(owner: string, instanceUuid: string): InstanceRecord {
    const instance = this.instances.get(instanceUuid);
    if (!instance || instance.owner !== owner) throw notFound("instance", instanceUuid);
    return instance;
  }

  private requireFrom(instance: InstanceRecord, operation: PowerOperation): void {
    if (!INSTANCE_TRANSITIONS[operation].from.includes(instance.status))
      throw notAllowed(instance, operation);
  }

  /** Creation and start need the balance to cover at least one hour (the emulator's reading of pre-payment). */
  private requireFirstHour(
    owner: string,
    podUuid: string,
    gpuUuid: string,
    gpuNums: number,
    chargingType: number,
  ): void {
    if (chargingType === CHARGING_TYPE.SUBSCRIPTION) return;
    this.wallet.requireAvailable(owner, this.hourlyPrice(podUuid, gpuUuid, gpuNums));
  }

  /**
   * field-notes.md, Prices: pod hourly price + GPU hourly price * gpu_nums. Instances made from a market
   * image have no pod and pay the GPU price only.
   */
  private hourlyPrice(podUuid: string, gpuUuid: string, gpuNums: number): Decimal {
    const pod = this.catalogue.pod(podUuid);
    const gpu = this.catalogue.gpus().find((g) => g.gpu_uuid === gpuUuid);
    return new Decimal(pod?.price.hour ?? 0).plus(new Decimal(gpu?.price.hour ?? 0).times(gpuNums));
  }

  private begin(instance: InstanceRecord, operation: PowerOperation): void {
    const transition = INSTANCE_TRANSITIONS[operation];
    const now = this.now();
    this.enter(instance, transition.via, now);
    instance.next = { status: transition.to, at: now + transition.seconds };
  }

  /** Every status change goes through here, so billing and idle tracking follow the status. */
  private enter(instance: InstanceRecord, status: number, now: number): void {
    instance.status = status;
    const billed = BILLED_STATUSES.includes(status) && instance.charging_type === CHARGING_TYPE.PAY_AS_YOU_GO;
    if (billed && instance.billed_until === null) instance.billed_until = now;
    if (!billed && instance.billed_until !== null) this.chargeUntil(instance, now);
    if (status === STATUS.RUNNING) {
      instance.start_time = now;
      if (instance.idle_close && instance.idle_next_check_at === null)
        instance.idle_next_check_at = now + IDLE_CHECK_SECONDS;
    } else {
      instance.idle_next_check_at = null;
    }
    this.refreshIdle(instance, now);
  }

  private chargeHour(instance: InstanceRecord): void {
    const from = instance.billed_until as number;
    const price = this.hourlyPrice(instance.pod_uuid, instance.gpu_uuid, instance.gpu_nums);
    this.wallet.charge(instance.owner, price, {
      kind: "instance_hourly",
      resource_id: instance.instance_uuid,
      start_time: from,
      end_time: from + BILLING_PERIOD_SECONDS,
    });
    instance.billed_until = from + BILLING_PERIOD_SECONDS;
    // Usage already consumed is charged even into the red; a negative balance then stops the instance
    // (the spec does not show what happens in arrears; the emulator's choice).
    if (new Decimal(this.wallet.balance(instance.owner)).isNegative() && instance.status === STATUS.RUNNING) {
      this.begin(instance, "shutdown");
    }
  }

  /** Charges the part of an hour used before a stop or a destroy, pro rata to the second. */
  private chargeUntil(instance: InstanceRecord, now: number): void {
    const from = instance.billed_until as number;
    instance.billed_until = null;
    if (now <= from) return;
    const price = this.hourlyPrice(instance.pod_uuid, instance.gpu_uuid, instance.gpu_nums);
    this.wallet.charge(instance.owner, price.times(now - from).dividedBy(BILLING_PERIOD_SECONDS), {
      kind: "instance_partial_hour",
      resource_id: instance.instance_uuid,
      start_time: from,
      end_time: now,
    });
  }

  private remove(instance: InstanceRecord): void {
    if (instance.billed_until !== null) this.chargeUntil(instance, this.now());
    this.instances.delete(instance.instance_uuid);
  }

  /** Keeps `idle_since`: when the current idle stretch began, or null while busy, stopped or without a policy. */
  private refreshIdle(instance: InstanceRecord, now: number): void {
    if (
      !instance.idle_close ||
      instance.status !== STATUS.RUNNING ||
      !isIdle(instance.utilization, instance.idle_close)
    ) {
      instance.idle_since = null;
    } else if (instance.idle_since === null) {
      instance.idle_since = now;
    }
  }

  private checkIdle(instance: InstanceRecord, now: number): void {
    instance.idle_next_check_at = now + IDLE_CHECK_SECONDS;
    this.refreshIdle(instance, now);
    const policy = instance.idle_close;
    if (!policy || instance.idle_since === null) return;
    if (now - instance.idle_since < policy.idle_period_minutes * 60) return;
    if (policy.destroy) this.remove(instance);
    else this.begin(instance, "shutdown");
  }
}

function idleGpus(count: number): Utilization[] {
  return Array.from({ length: count }, () => ({ gpu: 0, fb: 0 }));
}

function effectiveThreshold(value: number): number | undefined {
  if (value === SKIP_THRESHOLD) return undefined;
  return value === 0 ? PLATFORM_IDLE_THRESHOLD : value;
}

/** Idle when every GPU is at or below both thresholds (a threshold of 100 is not checked). */
export function isIdle(utilization: readonly Utilization[], policy: IdlePolicy): boolean {
  const gpuLimit = effectiveThreshold(policy.idle_gpu_threshold);
  const fbLimit = effectiveThreshold(policy.idle_fb_threshold);
  return utilization.every(
    (u) => (gpuLimit === undefined || u.gpu <= gpuLimit) && (fbLimit === undefined || u.fb <= fbLimit),
  );
}

function dueTimes(instance: InstanceRecord): number[] {
  const times: number[] = [];
  if (instance.next) times.push(instance.next.at);
  if (instance.save_image_next) times.push(instance.save_image_next.at);
  if (instance.billed_until !== null) times.push(instance.billed_until + BILLING_PERIOD_SECONDS);
  if (instance.shutdown_regular.enable) times.push(instance.shutdown_regular.shutdown_time);
  if (instance.idle_next_check_at !== null) times.push(instance.idle_next_check_at);
  return times;
}

function notAllowed(instance: InstanceRecord, operation: string): ApiError {
  return wrongState(
    `instance ${instance.instance_uuid} cannot ${operation} in status ${instance.status}; wait for a status that allows it`,
  );
}

function createdView(instance: InstanceRecord): CreatedInstance {
  return {
    instance_uuid: instance.instance_uuid,
    title: instance.title,
    status: instance.status,
    create_time: instance.create_time,
    start_time: instance.start_time,
    save_image_status: instance.save_image_status,
    charging_type: instance.charging_type,
    shutdown_regular: { ...instance.shutdown_regular },
    image_uuid: instance.image_uuid,
    image_name: instance.image_name,
    image_tag: instance.image_tag,
    gpu_uuid: instance.gpu_uuid,
    gpu_name: instance.gpu_name,
    gpu_nums: instance.gpu_nums,
  };
}

function fullView(instance: InstanceRecord): InstanceView {
  const httpUrl = `https://${instance.http_host}`;
  return {
    ...createdView(instance),
    server_url: [httpUrl],
    server_map: [
      { title: "JupyterLab", url: httpUrl, port_type: "http", protocol: "tcp" },
      {
        title: "SSH",
        url: `ssh://${instance.ssh.username}@${instance.ssh.host}:${instance.ssh.port}`,
        port_type: "ssh",
        protocol: "tcp",
        ssh_info: { ...instance.ssh },
      },
    ],
    idle_close: instance.idle_close ? { ...instance.idle_close } : null,
  };
}
