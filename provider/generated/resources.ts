// Generated from the resource definitions (provider/resources) by `npm run build`; edit those, not this.
import * as pulumi from "@pulumi/pulumi";
import { componentArguments, initializeComponent } from "../component-registration";
import { resourceArguments } from "../registration";

/** An exposed service of an instance (its server_map entry). */
export interface ServiceOutput {
  /** The service's title. */
  title: string | null;
  /** The service's address. */
  url: string | null;
  /** `http` or `ssh`. */
  portType: string | null;
  /** `tcp` or `udp`. */
  protocol: string | null;
  /** How to reach an ssh service; null for other services. */
  ssh: {
    /** SSH host. */
    host: string;
    /** SSH port. */
    port: number;
    /** SSH user; the password is in the instance's sshPasswords. */
    username: string;
  } | null;
}

/** A create whose answer was lost and whose outcome stayed unknown; the next up, refresh or destroy resolves it. */
export interface PendingCreate {
  /** What the create asked the cloud for. */
  spec: CreateSpec;
  /** Cloud Unix seconds: an instance it made was created at or after this (the newest create time listed before the call; null when none was). */
  windowStart: number | null;
  /** Cloud Unix seconds: ... and at or before this (the newest create time listed once the call had settled; null when no such listing was read). */
  windowEnd: number | null;
  /** Instances of the spec created in the second windowStart and listed before the call: not its own. */
  listedBefore: string[];
  /** Instances created in the second windowEnd that the listing closing the window showed: only these of that second can be its own. */
  listedAtEnd: string[];
  /** Why the outcome stayed unknown. */
  reason: string;
  /** The instances that could be the one it made, when it was given up. */
  candidates: ({
    /** An unmarked instance of the spec listed in the window. */
    instanceUuid: string;
    /** When it was created, Unix seconds. */
    createTime: number | null;
  })[];
}

/** What a create asked the cloud for. */
export interface CreateSpec {
  /** The pod it is created from. */
  podUuid?: string;
  /** The pod's version, when the program names one. */
  podTag?: string;
  /** The image it is created from, instead of a pod. */
  imageUuid?: string;
  /** GPU model. */
  gpuUuid: string;
  /** Number of GPUs. */
  gpuNums: number;
}

/** The arguments of {@link Instance}. */
export interface InstanceArgs {
  /** Create from this pod (application-market template). */
  podUuid?: pulumi.Input<string>;
  /** Pod version; the latest when absent. Only with podUuid. */
  podTag?: pulumi.Input<string>;
  /** Create from this image instead of a pod. */
  imageUuid?: pulumi.Input<string>;
  /** GPU model. */
  gpuUuid: pulumi.Input<string>;
  /** GPU models tried in this order after gpuUuid when the cloud refuses a model (no free cards), at create and when a stopped instance is started. Each a valid model of the catalogue, listed once, never gpuUuid. The model the instance runs on is runningGpuUuid; while it is gpuUuid or one of these, changing or reordering the list plans nothing. Left out, only gpuUuid is tried. */
  fallbackGpuUuids?: pulumi.Input<string[]>;
  /** Number of GPUs: 1, 2, 4, 8. */
  gpuNums: pulumi.Input<number>;
  /** Instance name, at most 50 characters: the owner's mark that tells this stack's instance from any other on the account. Left out, the provider names the instance `<resource name>-<7 random hex>` once and keeps that name in the state (through the native plugin the suffix comes from the engine's seed, so a preview shows the name the update writes; the dynamic providers get no seed, so a preview's name is only a stand-in). A mark cleared in the console shows at refresh, and the next update writes it back. An empty title turns the mark off: a lost create of the same spec, in any stack on the account, may then take the instance. */
  title?: pulumi.Input<string>;
  /** Desired power state. */
  running?: pulumi.Input<boolean>;
  /** Scheduled shutdown (Unix seconds or ISO 8601); absent means none. */
  shutdownAt?: pulumi.Input<number | string>;
  /** How long each wait of create and power changes lasts, in seconds. A create whose answer was lost follows an instance that appeared through its grace and claim even past this time, so that it is adopted rather than left as a pending create. */
  waitTimeoutSeconds?: pulumi.Input<number>;
  /** Create and start-up (running false to true) also wait until every web (http) service in server_map answers: any HTTP status below 500 counts, a 5xx or a failed connection does not. The wait lasts at most waitTimeoutSeconds; a create whose services never answer fails and destroys the instance. */
  waitForServices?: pulumi.Input<boolean>;
  /** Adopt this existing instance instead of creating one. */
  adoptInstanceUuid?: pulumi.Input<string>;
}

/** A GPU instance. Adopt an existing one with `adoptInstanceUuid` (dynamic providers cannot `import`). Its id is the instance's uuid (its instanceUuid); while a create's outcome is unknown, `pending-create:<time>:<8 hex>` until the next up, refresh or destroy resolves it. */
export class Instance extends pulumi.dynamic.Resource {
  /** Create from this pod (application-market template). */
  declare readonly podUuid: pulumi.Output<string | undefined>;
  /** Pod version; the latest when absent. Only with podUuid. */
  declare readonly podTag: pulumi.Output<string | undefined>;
  /** Create from this image instead of a pod. */
  declare readonly imageUuid: pulumi.Output<string | undefined>;
  /** GPU model. */
  declare readonly gpuUuid: pulumi.Output<string>;
  /** GPU models tried in this order after gpuUuid when the cloud refuses a model (no free cards), at create and when a stopped instance is started. Each a valid model of the catalogue, listed once, never gpuUuid. The model the instance runs on is runningGpuUuid; while it is gpuUuid or one of these, changing or reordering the list plans nothing. Left out, only gpuUuid is tried. */
  declare readonly fallbackGpuUuids: pulumi.Output<string[] | undefined>;
  /** Number of GPUs: 1, 2, 4, 8. */
  declare readonly gpuNums: pulumi.Output<number>;
  /** The instance's name in the cloud; empty when it has none. */
  declare readonly title: pulumi.Output<string>;
  /** Desired power state. */
  declare readonly running: pulumi.Output<boolean>;
  /** Scheduled shutdown (Unix seconds or ISO 8601); absent means none. */
  declare readonly shutdownAt: pulumi.Output<number | undefined>;
  /** How long each wait of create and power changes lasts, in seconds. A create whose answer was lost follows an instance that appeared through its grace and claim even past this time, so that it is adopted rather than left as a pending create. */
  declare readonly waitTimeoutSeconds: pulumi.Output<number>;
  /** Create and start-up (running false to true) also wait until every web (http) service in server_map answers: any HTTP status below 500 counts, a 5xx or a failed connection does not. The wait lasts at most waitTimeoutSeconds; a create whose services never answer fails and destroys the instance. */
  declare readonly waitForServices: pulumi.Output<boolean>;
  /** Adopt this existing instance instead of creating one. */
  declare readonly adoptInstanceUuid: pulumi.Output<string | undefined>;
  /** The instance's uuid; also its id. */
  declare readonly instanceUuid: pulumi.Output<string>;
  /** The cloud's numeric status (see statusName). */
  declare readonly status: pulumi.Output<number>;
  /** The status by name: running, stopped, ... */
  declare readonly statusName: pulumi.Output<string>;
  /** Addresses of the instance's web services. */
  declare readonly serverUrls: pulumi.Output<string[]>;
  /** The instance's exposed services. */
  declare readonly services: pulumi.Output<ServiceOutput[]>;
  /** SSH password of each ssh service, keyed by the service's title. A secret: Pulumi stores it encrypted. */
  declare readonly sshPasswords: pulumi.Output<Record<string, string>>;
  /** GPU model name. */
  declare readonly gpuName: pulumi.Output<string | null>;
  /** The GPU model the instance runs on: gpuUuid, or the one of fallbackGpuUuids the cloud had cards of. */
  declare readonly runningGpuUuid: pulumi.Output<string | null>;
  /** Image name. */
  declare readonly imageName: pulumi.Output<string | null>;
  /** Image version tag. */
  declare readonly imageTag: pulumi.Output<string | null>;
  /** When it was created, Unix seconds. */
  declare readonly createTime: pulumi.Output<number | null>;
  /** When it last started, Unix seconds. */
  declare readonly startTime: pulumi.Output<number | null>;
  /** Billing type, as the cloud reports it. */
  declare readonly chargingType: pulumi.Output<number | null>;
  /** The scheduled shutdown as the cloud reports it. */
  declare readonly shutdownRegular: pulumi.Output<{
    /** When, Unix seconds. */
    shutdownTime: number;
    /** Whether it is set. */
    enable: boolean;
  } | null>;
  /** Set only while the create's outcome is unknown (its id is then `pending-create:...`); null for an instance. */
  declare readonly pendingCreate: pulumi.Output<PendingCreate | null>;

  constructor(name: string, args: InstanceArgs, opts?: pulumi.CustomResourceOptions) {
    super(...resourceArguments("Instance", name, args, opts));
  }
}

/** The arguments of {@link IdleClosePolicy}. */
export interface IdleClosePolicyArgs {
  /** The instance the policy watches. */
  instanceUuid: pulumi.Input<string>;
  /** How long every GPU must stay idle before the instance is shut down: 10, 30, 60, 120 minutes. */
  idlePeriodMinutes: pulumi.Input<number>;
  /** Also destroy the instance when it is shut down for idleness (irreversible). */
  destroyOnIdle?: pulumi.Input<boolean>;
  /** GPU utilisation threshold in percent: 0 = the platform's threshold, 100 = skip this check. */
  gpuThreshold?: pulumi.Input<number>;
  /** Video-memory utilisation threshold in percent: 0 = the platform's threshold, 100 = skip this check. */
  memoryThreshold?: pulumi.Input<number>;
}

/** Shuts an instance down (or destroys it) when all its GPUs stay idle for a while. Its id is the uuid of the instance it watches (its instanceUuid); an instance has at most one idle policy. */
export class IdleClosePolicy extends pulumi.dynamic.Resource {
  /** The instance the policy watches. */
  declare readonly instanceUuid: pulumi.Output<string>;
  /** How long every GPU must stay idle before the instance is shut down: 10, 30, 60, 120 minutes. */
  declare readonly idlePeriodMinutes: pulumi.Output<number>;
  /** Also destroy the instance when it is shut down for idleness (irreversible). */
  declare readonly destroyOnIdle: pulumi.Output<boolean>;
  /** GPU utilisation threshold in percent: 0 = the platform's threshold, 100 = skip this check. */
  declare readonly gpuThreshold: pulumi.Output<number>;
  /** Video-memory utilisation threshold in percent: 0 = the platform's threshold, 100 = skip this check. */
  declare readonly memoryThreshold: pulumi.Output<number>;

  constructor(name: string, args: IdleClosePolicyArgs, opts?: pulumi.CustomResourceOptions) {
    super(...resourceArguments("IdleClosePolicy", name, args, opts));
  }
}

/** The arguments of {@link PersonalImage}. */
export interface PersonalImageArgs {
  /** Save this instance as a new personal image. */
  instanceUuid?: pulumi.Input<string>;
  /** Adopt this existing personal image instead of saving one. */
  adoptImageUuid?: pulumi.Input<string>;
  /** How long create waits for the image to be saved (and the next update, when it did not finish). */
  waitTimeoutSeconds?: pulumi.Input<number>;
}

/** A personal image saved from an instance (or adopted by uuid). Its id is the image's uuid (its imageUuid). */
export class PersonalImage extends pulumi.dynamic.Resource {
  /** Save this instance as a new personal image. */
  declare readonly instanceUuid: pulumi.Output<string | undefined>;
  /** Adopt this existing personal image instead of saving one. */
  declare readonly adoptImageUuid: pulumi.Output<string | undefined>;
  /** How long create waits for the image to be saved (and the next update, when it did not finish). */
  declare readonly waitTimeoutSeconds: pulumi.Output<number>;
  /** The image's uuid; also its id. */
  declare readonly imageUuid: pulumi.Output<string>;
  /** The image's title. */
  declare readonly title: pulumi.Output<string | null>;
  /** The image's remark. */
  declare readonly remark: pulumi.Output<string | null>;
  /** How many layers the image has. */
  declare readonly layerCount: pulumi.Output<number | null>;
  /** The image's size in GB. */
  declare readonly sizeGb: pulumi.Output<number | null>;
  /** The pod the image was saved from. */
  declare readonly podUuid: pulumi.Output<string | null>;
  /** The version of that pod. */
  declare readonly podTag: pulumi.Output<string | null>;
  /** 1 uploading, 2 saved, 3 failed. */
  declare readonly saveImageStatus: pulumi.Output<number | null>;
  /** When it was saved, Unix seconds. */
  declare readonly createTime: pulumi.Output<number | null>;

  constructor(name: string, args: PersonalImageArgs, opts?: pulumi.CustomResourceOptions) {
    super(...resourceArguments("PersonalImage", name, args, opts));
  }
}

/** The arguments of {@link Fleet}. */
export interface FleetArgs {
  /** How many members: `<fleet>-0` to `<fleet>-<size - 1>`, a whole number from 0 to 1000. */
  size: pulumi.Input<number>;
  /** Create from this pod (application-market template). */
  podUuid?: pulumi.Input<string>;
  /** Pod version; the latest when absent. Only with podUuid. */
  podTag?: pulumi.Input<string>;
  /** Create from this image instead of a pod. */
  imageUuid?: pulumi.Input<string>;
  /** GPU model. */
  gpuUuid: pulumi.Input<string>;
  /** GPU models tried in this order after gpuUuid when the cloud refuses a model (no free cards), at create and when a stopped instance is started. Each a valid model of the catalogue, listed once, never gpuUuid. The model the instance runs on is runningGpuUuid; while it is gpuUuid or one of these, changing or reordering the list plans nothing. Left out, only gpuUuid is tried. */
  fallbackGpuUuids?: pulumi.Input<string[]>;
  /** Number of GPUs: 1, 2, 4, 8. */
  gpuNums: pulumi.Input<number>;
  /** Desired power state. */
  running?: pulumi.Input<boolean>;
  /** Create and start-up (running false to true) also wait until every web (http) service in server_map answers: any HTTP status below 500 counts, a 5xx or a failed connection does not. The wait lasts at most waitTimeoutSeconds; a create whose services never answer fails and destroys the instance. */
  waitForServices?: pulumi.Input<boolean>;
  /** How long each wait of create and power changes lasts, in seconds. A create whose answer was lost follows an instance that appeared through its grace and claim even past this time, so that it is adopted rather than left as a pending create. */
  waitTimeoutSeconds?: pulumi.Input<number>;
  /** Gives every member an idle policy `<fleet>-<i>-idle` that shuts it down once all its GPUs stayed idle this long: 10, 30, 60 or 120 minutes. Absent: the members have no idle policy. */
  idlePeriodMinutes?: pulumi.Input<number>;
  /** With idlePeriodMinutes: the policies also destroy a member they shut down (irreversible). */
  destroyOnIdle?: pulumi.Input<boolean>;
  /** How a change of what the members are made of replaces them. `allAtOnce`: every member at the same time, as the engine replaces any resource (each new member is made before its old one is deleted). `oneAtATime`: member 0, then member 1, ..., each once the one before is done, so a spec that fails stops at its first member; new members are then created one at a time too. */
  replaceMembers?: pulumi.Input<"allAtOnce" | "oneAtATime">;
}

/** A fleet of `size` identical GPU instances, each with its idle policy when `idlePeriodMinutes` is set, declared as one component resource. Its members are Instances named `<fleet>-<i>` (i from 0) with IdleClosePolicies named `<fleet>-<i>-idle`, its children; each member is titled with its own autoname (`<fleet>-<i>-<7 hex>`), the owner's mark. Growing adds members at the end and shrinking removes them from the end; the others are untouched. */
export class Fleet extends pulumi.ComponentResource {
  /** The members' instance uuids, member i at index i. */
  declare readonly instanceUuids: pulumi.Output<string[]>;
  /** The addresses of each member's web services, member i at index i. */
  declare readonly serverUrls: pulumi.Output<string[][]>;
  /** What the running members cost per hour together, in CNY, estimated from the catalogue before anything is rented (known at preview): size × (the pod's hourly price + the GPU model's hourly price × gpuNums); a member made from an image counts the GPU alone; 0 when running is false. */
  declare readonly hourlyPrice: pulumi.Output<number>;

  constructor(name: string, args: FleetArgs, opts?: pulumi.ComponentResourceOptions) {
    super(...componentArguments("Fleet", name, args, opts));
  }

  /** Declares the children; Pulumi calls it while constructing a component it does not have the plugin construct. */
  protected override initialize(args: pulumi.Inputs, _opts?: unknown, name?: string): Promise<unknown> {
    return initializeComponent("Fleet", this, args, name ?? "", (outputs) => this.registerOutputs(outputs));
  }
}
