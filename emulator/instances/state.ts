import { z } from "zod";
import { nonEmpty, seconds } from "../core/state-schema";

/**
 * An instance as the store keeps it, and as the state file and snapshots hold it. The schema is the
 * single source: the record type is inferred from it, and restore refuses a record that does not fit.
 */

const percent = z.number().min(0).max(100);

/**
 * The idle policy as list/info show it in `idle_close`. The API documents no read-back of the policy;
 * the emulator adds this field so refresh can see drift.
 */
export const idlePolicySchema = z.object({
  idle_period_minutes: z.int().min(0),
  destroy: z.boolean(),
  idle_gpu_threshold: z.int().min(0).max(100),
  idle_fb_threshold: z.int().min(0).max(100),
});
export type IdlePolicy = z.infer<typeof idlePolicySchema>;

export const utilizationSchema = z.object({ gpu: percent, fb: percent });
export type Utilization = z.infer<typeof utilizationSchema>;

/** A web service the instance's image exposes (an http entry of server_map), on a port inside the instance. */
export const webServiceSchema = z.object({
  title: nonEmpty,
  port: z.int().min(1).max(65535),
});
export type WebService = z.infer<typeof webServiceSchema>;

/** The instance's SSH login; its host is the emulator's, its port the one its listener holds (0 before any). */
const sshLoginSchema = z.object({
  port: z.int().min(0).max(65535).default(0),
  username: nonEmpty,
  password: nonEmpty,
});

/** Instances saved before web services were modelled expose JupyterLab, as they showed then. */
const LEGACY_SERVICES: WebService[] = [{ title: "JupyterLab", port: 8888 }];

export const instanceRecordSchema = z
  .object({
    instance_uuid: nonEmpty,
    owner: nonEmpty,
    title: z.string(),
    status: z.int(),
    /** The pending status change, if any: the clock applies it at `at`. */
    next: z.object({ status: z.int(), at: seconds }).nullable(),
    create_time: seconds,
    start_time: seconds,
    image_uuid: z.string(),
    image_name: z.string(),
    image_tag: z.string(),
    pod_uuid: z.string(),
    pod_tag: z.string(),
    gpu_uuid: nonEmpty,
    gpu_name: z.string(),
    gpu_nums: z.int().min(1),
    charging_type: z.int(),
    shutdown_regular: z.object({ shutdown_time: seconds, enable: z.boolean() }),
    /** 0 until the first save_image (the spec defines only 1, 2 and 3; 0 is the emulator's "never saved"). */
    save_image_status: z.int(),
    save_image_next: z.object({ save_image_status: z.int(), at: seconds }).nullable(),
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
    services_next: z.object({ at: seconds }).nullable().default(null),
    ssh: sshLoginSchema,
  })
  // Records saved before readiness was modelled: a running instance's services answered.
  .transform((record) => ({ ...record, services_ready: record.services_ready ?? record.status === 2 }));
export type InstanceRecord = z.infer<typeof instanceRecordSchema>;

export const instancesStateSchema = z.array(instanceRecordSchema);
