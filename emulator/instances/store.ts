/**
 * The instances room's store: creation, the power state machine as data, schedules, idle-close, hourly
 * billing and service readiness, all driven by the clock; nothing of HTTP.
 */
import Decimal from "decimal.js";
import { DEFAULT_DURATIONS, type DurationName, type Durations } from "../core/durations";
import { ApiError, businessError, notFound, paramError, wrongState } from "../core/http/errors";
import { newSecret } from "../core/ids";
import type { KnownState } from "../core/state/schema";
import { requireReservation, requireUser } from "../core/state/schema";
import type { Wallet } from "../core/wallet";
import type { WebService } from "../catalogue/entries";
import type { CatalogueStore } from "../catalogue/store";
import { marketImageName } from "../catalogue/seed";
import { SAVE_STATUS } from "../images/codes";
import type { ImagesStore } from "../images/store";
import type { StockStore } from "../stock/store";
import { CARDS_RELEASED_STATUSES, CHARGING_TYPE, STATUS } from "./codes";
import type { IdlePolicy, InstanceRecord, Utilization } from "./state";

export type { IdlePolicy, Utilization } from "./state";

/**
 * Power operations as data: from which statuses an operation is allowed,
 * the status it passes through, the one it ends in, and which of the `--durations` it takes.
 */
const POWER_OPERATIONS = {
  create: { from: [] as number[], via: STATUS.STARTING, to: STATUS.RUNNING, duration: "boot" },
  startup: {
    from: [STATUS.STOPPED_LEGACY, STATUS.STOPPED, STATUS.STOPPED_ABNORMAL] as number[],
    via: STATUS.RESTARTING_FROM_STOP,
    to: STATUS.RUNNING,
    duration: "startup",
  },
  shutdown: {
    from: [STATUS.RUNNING] as number[],
    via: STATUS.SHUTTING_DOWN,
    to: STATUS.STOPPED,
    duration: "shutdown",
  },
  restart: {
    from: [STATUS.RUNNING] as number[],
    via: STATUS.RESTARTING,
    to: STATUS.RUNNING,
    duration: "restart",
  },
} as const satisfies Record<string, { from: number[]; via: number; to: number; duration: DurationName }>;

export type PowerOperation = keyof typeof POWER_OPERATIONS;
export type Transition = { from: readonly number[]; via: number; to: number; seconds: number };

/** The power transitions with their simulated durations. */
export function instanceTransitions(durations: Durations): Record<PowerOperation, Transition> {
  const table = {} as Record<PowerOperation, Transition>;
  for (const [operation, { from, via, to, duration }] of Object.entries(POWER_OPERATIONS)) {
    table[operation as PowerOperation] = { from, via, to, seconds: durations[duration] };
  }
  return table;
}

/** The transitions with the default durations. */
export const INSTANCE_TRANSITIONS = instanceTransitions(DEFAULT_DURATIONS);

/** Statuses in which an instance is powered and billed by the hour. */
const BILLED_STATUSES: readonly number[] = [
  STATUS.STARTING,
  STATUS.RUNNING,
  STATUS.SHUTTING_DOWN_LEGACY,
  STATUS.SHUTTING_DOWN,
  STATUS.RESTARTING_FROM_STOP,
  STATUS.RESTARTING,
];

export const BILLING_PERIOD_SECONDS = 3600;

/** Idle-close. */
export const IDLE_CHECK_SECONDS = 60;
/** Threshold 0 means "the platform-wide threshold", whose value is not shown; the emulator uses 5 %. */
export const PLATFORM_IDLE_THRESHOLD = 5;
// docs/design/cloud-api.md#idle-close
/** Threshold 100 skips that check. */
export const SKIP_THRESHOLD = 100;

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

interface SshInfo {
  host: string;
  port: number;
  username: string;
  password: string;
}

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
  services: WebService[];
}

/** Where the emulator serves an instance's services; the services gateway answers there. */
export interface ServiceAddresses {
  /** The host of the instances' SSH endpoints (the emulator's own). */
  sshHost(): string;
  /** The URL of an instance's web service on `port` inside the instance. */
  webService(instanceUuid: string, port: number): string;
}

/** What a request to an instance's web service meets, as the clock has it (the gateway only asks). */
export type ServiceState =
  | { state: "ready"; service: WebService }
  | { state: "starting"; service: WebService }
  | { state: "stopped"; service: WebService }
  | { state: "no_such_service" }
  | { state: "no_instance" };

export interface InstancesConfig {
  now: () => number;
  nextId: (prefix: string) => string;
  wallet: Wallet;
  catalogue: CatalogueStore;
  images: ImagesStore;
  /** The GPU stock a create or start must find enough free cards in. */
  stock: StockStore;
  durations: Durations;
  /** What every new instance's GPUs report until set otherwise (`--utilization`). */
  startingUtilization: Utilization;
  addresses: ServiceAddresses;
}

/** Statuses in which an instance is on its way to serving, or serving. */
const POWERED_UP_STATUSES: readonly number[] = [
  STATUS.STARTING,
  STATUS.RUNNING,
  STATUS.RESTARTING_FROM_STOP,
  STATUS.RESTARTING,
];

/** Instances: creation, power state machine, schedules, idle-close, hourly billing and service readiness. */
export class InstancesStore {
  private instances = new Map<string, InstanceRecord>();
  private readonly now: () => number;
  private readonly nextId: (prefix: string) => string;
  private readonly wallet: Wallet;
  private readonly catalogue: CatalogueStore;
  private readonly images: ImagesStore;
  private readonly stock: StockStore;
  private readonly durations: Durations;
  private readonly transitions: Record<PowerOperation, Transition>;
  private readonly startingUtilization: Utilization;
  private readonly addresses: ServiceAddresses;

  constructor(config: InstancesConfig) {
    this.now = config.now;
    this.nextId = config.nextId;
    this.wallet = config.wallet;
    this.catalogue = config.catalogue;
    this.images = config.images;
    this.stock = config.stock;
    this.durations = config.durations;
    this.transitions = instanceTransitions(config.durations);
    this.startingUtilization = { ...config.startingUtilization };
    this.addresses = config.addresses;
  }

  createByPod(
    owner: string,
    input: { pod_uuid: string; pod_tag?: string; gpu_uuid: string; gpu_nums: number },
  ): CreatedInstance {
    const pod = this.catalogue.pod(input.pod_uuid);
    // A pod is the image of create_by_pod: a missing one answers the API's missing-image code -1
    // (docs/design/cloud-api.md#other-failures).
    if (!pod) throw notFound("pod", `${input.pod_uuid}; pick one from /pod/list`);
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
      services: this.catalogue.webServicesOf(pod.uuid),
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
        services: this.catalogue.webServicesOf(""),
      });
    }
    const personal = this.images.find(owner, input.image_uuid);
    // A missing image is code -1, and another user's looks missing (docs/design/cloud-api.md#errors).
    if (!personal)
      throw notFound("image", `${input.image_uuid} is neither a market image nor one of your images`);
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
      services: this.catalogue.webServicesOf(personal.pod_uuid),
    });
  }

  list(owner: string): InstanceView[] {
    return [...this.instances.values()].filter((i) => i.owner === owner).map((i) => this.fullView(i));
  }

  /** Every user's instances with their owner (the web console shows them all). */
  listAll(): (InstanceView & { owner: string })[] {
    return [...this.instances.values()].map((i) => ({ ...this.fullView(i), owner: i.owner }));
  }

  info(owner: string, instanceUuid: string): InstanceView {
    return this.fullView(this.owned(owner, instanceUuid));
  }

  // docs/design/cloud-api.md#failures-of-update_title
  /** update_title answers code 1 (not -1) for a missing, deleted or foreign instance. */
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
      this.stock.admit(model, nums);
      const reservation = this.reserveFirstHour(instance, model.gpu_uuid, nums);
      instance.gpu_uuid = model.gpu_uuid;
      instance.gpu_name = model.gpu_name;
      instance.gpu_nums = nums;
      instance.utilization = this.freshUtilization(nums);
      instance.first_hour_reservation = reservation;
    } else {
      this.stock.admit(instance, instance.gpu_nums);
      instance.first_hour_reservation = this.reserveFirstHour(instance, instance.gpu_uuid, instance.gpu_nums);
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

  // docs/design/live-service-notes.md#power-and-schedule-calls
  /** Only for a running instance; enable=false or shutdown_time=0 cancels. */
  shutdownTimer(owner: string, instanceUuid: string, enable: boolean, shutdownTime: number): void {
    const instance = this.owned(owner, instanceUuid);
    if (instance.status !== STATUS.RUNNING) throw notAllowed(instance, "shutdown_timer");
    if (!enable || shutdownTime === 0) {
      instance.shutdown_regular = { shutdown_time: 0, enable: false };
      return;
    }
    // Clients send a time at least 5 minutes ahead; the emulator only requires the future
    // (docs/design/live-service-notes.md#power-and-schedule-calls).
    if (shutdownTime <= this.now())
      throw paramError("shutdown_time", `must be in the future (now is ${this.now()})`);
    instance.shutdown_regular = { shutdown_time: shutdownTime, enable: true };
  }

  // Which states save_image accepts is not known (docs/design/live-service-notes.md#power-and-schedule-calls).
  /** Running or stopped instances can be saved (the emulator's choice). */
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
      name: instance.title || instance.image_name,
      pod_uuid: instance.pod_uuid,
      pod_tag: instance.pod_tag,
      instance_uuid: instance.instance_uuid,
    });
    instance.save_image_status = SAVE_STATUS.UPLOADING;
    instance.save_image_next = {
      save_image_status: SAVE_STATUS.SUCCEEDED,
      at: image.create_time + this.durations.save_image,
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
    if (instance.charging_type === CHARGING_TYPE.SUBSCRIPTION) {
      instance.billed_until = null;
      this.releaseFirstHour(instance);
    }
  }

  /** Instances whose SSH endpoint answers now: the services gateway keeps a listener open for each. */
  sshEndpoints(): { instance_uuid: string; port: number }[] {
    return [...this.instances.values()]
      .filter((i) => i.services_ready)
      .map((i) => ({ instance_uuid: i.instance_uuid, port: i.ssh.port }));
  }

  /** Instances that have no SSH port yet, and every port already given to one. */
  sshPorts(): { unassigned: string[]; taken: Set<number> } {
    const records = [...this.instances.values()];
    return {
      unassigned: records.filter((i) => i.ssh.port === 0).map((i) => i.instance_uuid),
      taken: new Set(records.map((i) => i.ssh.port).filter((port) => port !== 0)),
    };
  }

  /** Records the port of an instance's SSH endpoint (the gateway picks it; it is 0 until then). */
  assignSshPort(instanceUuid: string, port: number): void {
    const instance = this.instances.get(instanceUuid);
    if (instance) instance.ssh.port = port;
  }

  /** Whether a web service of an instance answers: ready `durations.services` after status 2, until it stops. */
  serviceState(instanceUuid: string, port: number): ServiceState {
    const instance = this.instances.get(instanceUuid);
    if (!instance) return { state: "no_instance" };
    const service = instance.services.find((s) => s.port === port);
    if (!service) return { state: "no_such_service" };
    if (instance.services_ready) return { state: "ready", service };
    return { state: POWERED_UP_STATUSES.includes(instance.status) ? "starting" : "stopped", service };
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

  /** The GPU cards instances hold, per gpu_uuid: the GPU stock counts them here, never keeps them. */
  cardsInUse(): Map<string, number> {
    const inUse = new Map<string, number>();
    for (const instance of this.instances.values()) {
      if (CARDS_RELEASED_STATUSES.includes(instance.status)) continue;
      inUse.set(instance.gpu_uuid, (inUse.get(instance.gpu_uuid) ?? 0) + instance.gpu_nums);
    }
    return inUse;
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
      if (instance.services_next && instance.services_next.at <= now) {
        instance.services_ready = true;
        instance.services_next = null;
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
    return [...this.instances.values()].map((i) => structuredClone(i));
  }

  restore(state: InstanceRecord[]): void {
    this.instances = new Map(state.map((i) => [i.instance_uuid, structuredClone(i)]));
  }

  /** Owners must have an account and reservations must exist, or a later charge would fail. */
  checkState(state: InstanceRecord[], known: KnownState): void {
    state.forEach((instance, index) => {
      requireUser(known, `[${index}].owner`, instance.owner);
      const reservation = instance.first_hour_reservation;
      if (reservation !== null) requireReservation(known, `[${index}].first_hour_reservation`, reservation);
    });
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
    this.stock.admit(gpu, input.gpu_nums);
    const now = this.now();
    const uuid = this.nextId("ins");
    const reservation = this.wallet.reserve(
      owner,
      this.hourlyPrice(source.pod_uuid, gpu.gpu_uuid, input.gpu_nums),
      { kind: "instance_hourly", resource_id: uuid },
    );
    const transition = this.transitions.create;
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
      utilization: this.freshUtilization(input.gpu_nums),
      billed_until: now,
      first_hour_reservation: reservation,
      services_ready: false,
      services_next: null,
      ssh: { port: 0, username: "root", password: newSecret() },
    };
    this.instances.set(uuid, instance);
    return createdView(instance);
  }

  /** An instance as list and info show it: its web services and SSH endpoint at the emulator's addresses. */
  private fullView(instance: InstanceRecord): InstanceView {
    const web = instance.services.map((service) => ({
      title: service.title,
      url: this.addresses.webService(instance.instance_uuid, service.port),
      port_type: "http" as const,
      protocol: "tcp" as const,
    }));
    const ssh: SshInfo = { host: this.addresses.sshHost(), ...instance.ssh };
    const urlHost = ssh.host.includes(":") ? `[${ssh.host}]` : ssh.host;
    return {
      ...createdView(instance),
      server_url: web.map((entry) => entry.url),
      server_map: [
        ...web,
        {
          title: "SSH",
          url: `ssh://${ssh.username}@${urlHost}:${ssh.port}`,
          port_type: "ssh",
          protocol: "tcp",
          ssh_info: ssh,
        },
      ],
      idle_close: instance.idle_close ? { ...instance.idle_close } : null,
    };
  }

  private owned(owner: string, instanceUuid: string): InstanceRecord {
    const instance = this.instances.get(instanceUuid);
    if (!instance || instance.owner !== owner) throw notFound("instance", instanceUuid);
    return instance;
  }

  private requireFrom(instance: InstanceRecord, operation: PowerOperation): void {
    if (!this.transitions[operation].from.includes(instance.status)) throw notAllowed(instance, operation);
  }

  /**
   * Creating or starting pre-deducts the first hour (the emulator's reading of pre-payment, as a
   * workflow run pre-deducts its quote): the balance must cover it after every other pre-deduction,
   * so parallel creates cannot overdraw it. The hour's charge settles the reservation.
   */
  private reserveFirstHour(instance: InstanceRecord, gpuUuid: string, gpuNums: number): string | null {
    if (instance.charging_type === CHARGING_TYPE.SUBSCRIPTION) return null;
    return this.wallet.reserve(instance.owner, this.hourlyPrice(instance.pod_uuid, gpuUuid, gpuNums), {
      kind: "instance_hourly",
      resource_id: instance.instance_uuid,
    });
  }

  private releaseFirstHour(instance: InstanceRecord): void {
    if (instance.first_hour_reservation === null) return;
    this.wallet.release(instance.first_hour_reservation);
    instance.first_hour_reservation = null;
  }

  private freshUtilization(gpuNums: number): Utilization[] {
    return Array.from({ length: gpuNums }, () => ({ ...this.startingUtilization }));
  }

  /**
   * Pod hourly price + GPU hourly price * gpu_nums, as public clients believe. Instances made from a
   * market image have no pod and pay the GPU price only.
   */
  private hourlyPrice(podUuid: string, gpuUuid: string, gpuNums: number): Decimal {
    const pod = this.catalogue.pod(podUuid);
    const gpu = this.catalogue.gpu(gpuUuid);
    return new Decimal(pod?.price.hour ?? 0).plus(new Decimal(gpu?.price.hour ?? 0).times(gpuNums));
  }

  private begin(instance: InstanceRecord, operation: PowerOperation): void {
    const transition = this.transitions[operation];
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
      instance.services_next = { at: now + this.durations.services };
    } else {
      instance.idle_next_check_at = null;
      instance.services_next = null;
    }
    instance.services_ready = false;
    this.refreshIdle(instance, now);
  }

  private chargeHour(instance: InstanceRecord): void {
    const from = instance.billed_until as number;
    const price = this.hourlyPrice(instance.pod_uuid, instance.gpu_uuid, instance.gpu_nums);
    this.bill(instance, price, {
      kind: "instance_hourly",
      start_time: from,
      end_time: from + BILLING_PERIOD_SECONDS,
    });
    instance.billed_until = from + BILLING_PERIOD_SECONDS;
    // Usage already consumed is charged even into the red; a negative balance then stops the instance
    // (the API does not show what happens in arrears; the emulator's choice:
    // docs/design/cloud-api.md#what-the-api-leaves-unknown).
    if (new Decimal(this.wallet.balance(instance.owner)).isNegative() && instance.status === STATUS.RUNNING) {
      this.begin(instance, "shutdown");
    }
  }

  /** Charges the part of an hour used before a stop or a destroy, pro rata to the second. */
  private chargeUntil(instance: InstanceRecord, now: number): void {
    const from = instance.billed_until as number;
    instance.billed_until = null;
    if (now <= from) {
      this.releaseFirstHour(instance);
      return;
    }
    const price = this.hourlyPrice(instance.pod_uuid, instance.gpu_uuid, instance.gpu_nums);
    this.bill(instance, price.times(now - from).dividedBy(BILLING_PERIOD_SECONDS), {
      kind: "instance_partial_hour",
      start_time: from,
      end_time: now,
    });
  }

  /** A charge for used time: it settles the first hour's pre-deduction when there is one. */
  private bill(
    instance: InstanceRecord,
    amount: Decimal,
    period: { kind: string; start_time: number; end_time: number },
  ): void {
    const reservation = instance.first_hour_reservation;
    if (reservation === null) {
      this.wallet.charge(instance.owner, amount, { ...period, resource_id: instance.instance_uuid });
      return;
    }
    instance.first_hour_reservation = null;
    this.wallet.settle(reservation, amount, period);
  }

  private remove(instance: InstanceRecord): void {
    if (instance.billed_until !== null) this.chargeUntil(instance, this.now());
    this.releaseFirstHour(instance);
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
  if (instance.services_next) times.push(instance.services_next.at);
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
