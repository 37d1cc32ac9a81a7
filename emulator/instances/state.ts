/**
 * The instances room's state schema: an instance as the store keeps it, and as the state file and snapshots
 * hold it. The schema is the single source: the record type is inferred from it, and restore refuses a record
 * that does not fit.
 */
import { z } from "zod";
import { characters, nonEmpty, seconds, text } from "../core/state/schema";
import { oneOfInts } from "../core/http/validation";
import { SAVE_STATUS } from "../images/codes";
import { CHARGING_TYPE, GPU_NUMS, IDLE_PERIODS, STATUS, TITLE_MAX } from "./codes";

const percent = z.number().min(0).max(100);

/**
 * The idle policy as list/info show it in `idle_close`. The API documents no read-back of the policy;
 * the emulator adds this field so refresh can see drift.
 */
export const idlePolicySchema = z.strictObject({
  idle_period_minutes: oneOfInts(IDLE_PERIODS),
  destroy: z.boolean(),
  idle_gpu_threshold: z.int().min(0).max(100),
  idle_fb_threshold: z.int().min(0).max(100),
});
export type IdlePolicy = z.infer<typeof idlePolicySchema>;

export const utilizationSchema = z.strictObject({ gpu: percent, fb: percent });
export type Utilization = z.infer<typeof utilizationSchema>;

/** A web service the instance's image exposes (an http entry of server_map), on a port inside the instance. */
export const webServiceSchema = z.strictObject({
  title: nonEmpty,
  port: z.int().min(1).max(65535),
});
export type WebService = z.infer<typeof webServiceSchema>;

/** The instance's SSH login; its host is the emulator's, its port the one its listener holds (0 before any). */
const sshLoginSchema = z.strictObject({
  port: z.int().min(0).max(65535).default(0),
  username: nonEmpty,
  password: nonEmpty,
});

/** Instances saved before web services were modelled expose JupyterLab, as they showed then. */
const LEGACY_SERVICES: WebService[] = [{ title: "JupyterLab", port: 8888 }];

const status = oneOfInts(Object.values(STATUS));

export const instanceRecordSchema = z
  .strictObject({
    instance_uuid: nonEmpty,
    owner: nonEmpty,
    title: characters(TITLE_MAX),
    status,
    /** The pending status change, if any: the clock applies it at `at`. */
    next: z.strictObject({ status, at: seconds }).nullable(),
    create_time: seconds,
    start_time: seconds,
    image_uuid: text,
    image_name: text,
    image_tag: text,
    pod_uuid: text,
    pod_tag: text,
    gpu_uuid: nonEmpty,
    gpu_name: text,
    gpu_nums: oneOfInts(GPU_NUMS),
    charging_type: oneOfInts(Object.values(CHARGING_TYPE)),
    shutdown_regular: z.strictObject({ shutdown_time: seconds, enable: z.boolean() }),
    /**
     * 0 until the first save_image (the API defines only 1, 2 and 3, docs/design/cloud-api.md#instance-record;
     * 0 is the emulator's "never saved").
     */
    save_image_status: oneOfInts([0, ...Object.values(SAVE_STATUS)]),
    save_image_next: z
      .strictObject({ save_image_status: oneOfInts(Object.values(SAVE_STATUS)), at: seconds })
      .nullable(),
    idle_close: idlePolicySchema.nullable(),
    idle_since: seconds.nullable(),
    idle_next_check_at: seconds.nullable(),
    utilization: z.array(utilizationSchema),
    /** Start of the not yet charged part of the current powered period; null when not billed. */
    billed_until: seconds.nullable(),
    /** The wallet reservation holding the first hour of the current powered period, until it is billed. */
    first_hour_reservation: nonEmpty.nullable().default(null),
    services: z.array(webServiceSchema).default(LEGACY_SERVICES),
    /** Whether the web services and SSH answer; they come up `durations.services` after status 2. */
    services_ready: z.boolean().optional(),
    services_next: z.strictObject({ at: seconds }).nullable().default(null),
    ssh: sshLoginSchema,
  })
  // Records saved before readiness was modelled: a running instance's services answered.
  .transform((record) => ({ ...record, services_ready: record.services_ready ?? record.status === 2 }));
export type InstanceRecord = z.infer<typeof instanceRecordSchema>;

export const instancesStateSchema = z.array(instanceRecordSchema);
