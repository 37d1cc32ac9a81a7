/**
 * The instances room's routes: /instance/* (create, list, info, title, power, schedules, idle-close,
 * save_image), parsed and answered over the store, and the room's admin routes.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ok } from "../core/http/envelope";
import { StoreRoom, type RoomContext } from "../core/room";
import { oneOfInts, paginate, pagingQuery, parseBody, parseQuery } from "../core/http/validation";
import { CHARGING_TYPE, GPU_NUMS, IDLE_PERIODS, STATUS, TITLE_MAX } from "./codes";
import { type InstancesConfig, InstancesStore } from "./store";
import { type InstanceRecord, instancesStateSchema } from "./state";

const uuid = z.string().min(1, { message: "is required" });
const instanceBody = z.object({ instance_uuid: uuid });
const gpuNums = oneOfInts(GPU_NUMS);
const threshold = z.number().int().min(0).max(100);

const createByPodBody = z.object({
  pod_uuid: uuid,
  pod_tag: z.string().min(1).optional(),
  gpu_uuid: uuid,
  gpu_nums: gpuNums,
});
const createByImageBody = z.object({ image_uuid: uuid, gpu_uuid: uuid, gpu_nums: gpuNums });
const listQuery = z.object(pagingQuery);
const infoQuery = z.object({ instance_uuid: uuid });
export const updateTitleBody = z.object({
  instance_uuid: uuid,
  // Characters, not UTF-16 units: an emoji counts once ("at most 50 characters",
  // docs/design/cloud-api.md#instance-record).
  title: z
    .string()
    .refine((t) => Array.from(t).length <= TITLE_MAX, { message: `must be at most ${TITLE_MAX} characters` })
    .default(""),
});
const startupBody = z.object({
  instance_uuid: uuid,
  gpu_uuid: uuid.optional(),
  gpu_nums: gpuNums.optional(),
});
const shutdownTimerBody = z.object({
  instance_uuid: uuid,
  enable: z.boolean(),
  shutdown_time: z.number().int().min(0),
});
export const idleCloseBody = z.object({
  instance_uuid: uuid,
  idle_period_minutes: oneOfInts(IDLE_PERIODS),
  destroy: z.boolean().default(false),
  idle_gpu_threshold: threshold.default(0),
  idle_fb_threshold: threshold.default(0),
});
export const utilizationBody = z.object({
  gpu: threshold,
  fb: threshold,
  index: z.number().int().min(0).optional(),
});
/**
 * Admin: a status of the cloud's (a transitional one stays until forced again or destroyed: a stuck
 * instance), a billing type, or both. A typo is refused, not ignored: it would leave the test that sent
 * it testing something else.
 */
const forceBody = z
  .strictObject({
    status: oneOfInts(Object.values(STATUS)).optional(),
    charging_type: oneOfInts(Object.values(CHARGING_TYPE)).optional(),
  })
  .refine((change) => change.status !== undefined || change.charging_type !== undefined, {
    message: "must give status, charging_type or both",
  });

/** /instance/*: creation, listing, title, power operations, schedules, images and idle-close. */
export class InstancesRoom extends StoreRoom<InstanceRecord[], InstancesStore> {
  readonly name = "instances";
  readonly stateSchema = instancesStateSchema;

  constructor(
    private readonly ctx: RoomContext,
    config: Omit<InstancesConfig, "now" | "nextId" | "wallet">,
  ) {
    super(
      new InstancesStore({ ...config, now: () => ctx.clock.now(), nextId: ctx.ids.next, wallet: ctx.wallet }),
    );
  }

  register(api: FastifyInstance): void {
    const user = (request: Parameters<RoomContext["currentUser"]>[0]) => this.ctx.currentUser(request);

    api.post("/instance/create_by_pod", async (request) =>
      ok(this.store.createByPod(user(request), parseBody(createByPodBody, request.body))),
    );
    api.post("/instance/create_by_image", async (request) =>
      ok(this.store.createByImage(user(request), parseBody(createByImageBody, request.body))),
    );
    api.get("/instance/list", async (request) => {
      const query = parseQuery(listQuery, request.query);
      const instances = this.store.list(user(request));
      return ok({ instance_list: paginate(instances, query.page, query.page_size), total: instances.length });
    });
    api.get("/instance/info", async (request) => {
      const owner = user(request);
      return ok(this.store.info(owner, parseQuery(infoQuery, request.query).instance_uuid));
    });
    api.post("/instance/update_title", async (request) => {
      const owner = user(request);
      const body = parseBody(updateTitleBody, request.body);
      this.store.updateTitle(owner, body.instance_uuid, body.title);
      return ok();
    });
    api.post("/instance/destroy", async (request) => {
      const owner = user(request);
      this.store.destroy(owner, parseBody(instanceBody, request.body).instance_uuid);
      return ok();
    });
    api.post("/instance/startup", async (request) => {
      const owner = user(request);
      const body = parseBody(startupBody, request.body);
      this.store.startup(owner, body.instance_uuid, body);
      return ok();
    });
    api.post("/instance/shutdown", async (request) => {
      const owner = user(request);
      this.store.shutdown(owner, parseBody(instanceBody, request.body).instance_uuid);
      return ok();
    });
    api.post("/instance/restart", async (request) => {
      const owner = user(request);
      this.store.restart(owner, parseBody(instanceBody, request.body).instance_uuid);
      return ok();
    });
    api.post("/instance/shutdown_timer", async (request) => {
      const owner = user(request);
      const body = parseBody(shutdownTimerBody, request.body);
      this.store.shutdownTimer(owner, body.instance_uuid, body.enable, body.shutdown_time);
      return ok();
    });
    api.post("/instance/save_image", async (request) => {
      const owner = user(request);
      this.store.saveImage(owner, parseBody(instanceBody, request.body).instance_uuid);
      return ok();
    });
    api.post("/instance/set_idle_close", async (request) => {
      const owner = user(request);
      const { instance_uuid, ...policy } = parseBody(idleCloseBody, request.body);
      // destroy is treated as false when idle_period_minutes is 0 (docs/design/cloud-api.md#idle-close).
      this.store.setIdleClose(owner, instance_uuid, {
        ...policy,
        destroy: policy.idle_period_minutes > 0 && policy.destroy,
      });
      return ok();
    });
  }

  registerAdmin(admin: FastifyInstance): void {
    admin.put<{ Params: { uuid: string } }>("/instances/:uuid/utilization", async (request) => {
      const { index, ...value } = parseBody(utilizationBody, request.body);
      this.store.setUtilization(request.params.uuid, value, index);
      return { instance_uuid: request.params.uuid, utilization: value, index: index ?? null };
    });
    admin.post<{ Params: { uuid: string } }>("/instances/:uuid/force", async (request) => {
      this.store.force(request.params.uuid, parseBody(forceBody, request.body));
      return { instance_uuid: request.params.uuid };
    });
  }
}
