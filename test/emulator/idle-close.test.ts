import { IDLE_CHECK_SECONDS, PLATFORM_IDLE_THRESHOLD } from "pulumi-gpucloud/emulator";
import {
  createInstance,
  instanceInfo,
  runningInstance,
  startTestEmulator,
  type TestEmulator,
  HTTP_ERROR_STATUS,
} from "./helpers";

describe("emulator set_idle_close", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ ...HTTP_ERROR_STATUS, apiKeys: ["demo-key", "other:other-key"] });
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  const setIdle = (body: Record<string, unknown>, key?: string) =>
    t.api("POST", "/instance/set_idle_close", { body, key });
  const utilization = (uuid: string, body: { gpu: number; fb: number; index?: number }) =>
    t.admin("PUT", `/instances/${uuid}/utilization`, body);
  const info = async (uuid: string) => (await instanceInfo(t, uuid)).body;

  it("shows the policy in idle_close with its defaults", async () => {
    const uuid = await runningInstance(t);
    expect((await setIdle({ instance_uuid: uuid, idle_period_minutes: 30 })).body).toEqual({
      code: 0,
      msg: "success",
    });
    expect((await info(uuid)).data.idle_close).toEqual({
      idle_period_minutes: 30,
      destroy: false,
      idle_gpu_threshold: 0,
      idle_fb_threshold: 0,
    });
  });

  it("shuts an idle instance down when the window elapses, not a minute before", async () => {
    const uuid = await runningInstance(t);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10 });
    await t.advance(10 * 60 - IDLE_CHECK_SECONDS);
    expect((await info(uuid)).data.status).toBe(2);
    await t.advance(IDLE_CHECK_SECONDS);
    expect((await info(uuid)).data.status).toBe(21);
    await t.advance(10);
    expect((await info(uuid)).data.status).toBe(22);
  });

  it("destroys the instance instead when destroy=true", async () => {
    const uuid = await runningInstance(t);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10, destroy: true });
    await t.advance(10 * 60);
    expect((await instanceInfo(t, uuid)).status).toBe(404);
  });

  it("keeps a busy GPU running and restarts the window when it goes quiet", async () => {
    const uuid = await runningInstance(t);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10, idle_gpu_threshold: 20 });
    await t.advance(5 * 60);
    await utilization(uuid, { gpu: 21, fb: 0 });
    await t.advance(30 * 60);
    expect((await info(uuid)).data.status).toBe(2);
    await utilization(uuid, { gpu: 20, fb: 0 });
    await t.advance(9 * 60);
    expect((await info(uuid)).data.status).toBe(2);
    await t.advance(60);
    expect((await info(uuid)).data.status).toBe(21);
  });

  it("is not idle while any one GPU is above a threshold", async () => {
    const uuid = await runningInstance(t, { gpuNums: 4 });
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10, idle_fb_threshold: 50 });
    await utilization(uuid, { gpu: 0, fb: 51, index: 3 });
    await t.advance(60 * 60);
    expect((await info(uuid)).data.status).toBe(2);
  });

  it(`reads threshold 0 as the platform threshold (${PLATFORM_IDLE_THRESHOLD} %), not 0 %`, async () => {
    const quiet = await runningInstance(t);
    const busy = await runningInstance(t);
    await setIdle({ instance_uuid: quiet, idle_period_minutes: 10 });
    await setIdle({ instance_uuid: busy, idle_period_minutes: 10 });
    await utilization(quiet, { gpu: PLATFORM_IDLE_THRESHOLD, fb: PLATFORM_IDLE_THRESHOLD });
    await utilization(busy, { gpu: PLATFORM_IDLE_THRESHOLD + 1, fb: 0 });
    await t.advance(10 * 60);
    expect((await info(quiet)).data.status).toBe(21);
    expect((await info(busy)).data.status).toBe(2);
  });

  it("skips the GPU check at threshold 100 but still checks video memory", async () => {
    const uuid = await runningInstance(t);
    await setIdle({
      instance_uuid: uuid,
      idle_period_minutes: 10,
      idle_gpu_threshold: 100,
      idle_fb_threshold: 10,
    });
    await utilization(uuid, { gpu: 100, fb: 11 });
    await t.advance(20 * 60);
    expect((await info(uuid)).data.status).toBe(2);
    await utilization(uuid, { gpu: 100, fb: 10 });
    await t.advance(10 * 60);
    expect((await info(uuid)).data.status).toBe(21);
  });

  it("is idle as soon as the window elapses when both thresholds are 100, whatever the load", async () => {
    const uuid = await runningInstance(t);
    await utilization(uuid, { gpu: 100, fb: 100 });
    await setIdle({
      instance_uuid: uuid,
      idle_period_minutes: 30,
      idle_gpu_threshold: 100,
      idle_fb_threshold: 100,
    });
    await t.advance(30 * 60 - 1);
    expect((await info(uuid)).data.status).toBe(2);
    await t.advance(1);
    expect((await info(uuid)).data.status).toBe(21);
  });

  it("cancels with idle_period_minutes 0 and treats destroy=true as false there", async () => {
    const uuid = await runningInstance(t);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10 });
    expect((await setIdle({ instance_uuid: uuid, idle_period_minutes: 0, destroy: true })).body.code).toBe(0);
    expect((await info(uuid)).data.idle_close).toBeNull();
    await t.advance(60 * 60);
    expect((await info(uuid)).data.status).toBe(2);
  });

  it("only watches while running: a stopped and restarted instance gets a fresh window", async () => {
    const uuid = await runningInstance(t);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10 });
    await t.api("POST", "/instance/shutdown", { body: { instance_uuid: uuid } });
    await t.advance(60 * 60);
    await t.api("POST", "/instance/startup", { body: { instance_uuid: uuid } });
    await t.advance(30 + 9 * 60);
    expect((await info(uuid)).data.status).toBe(2);
    await t.advance(60);
    expect((await info(uuid)).data.status).toBe(21);
  });

  it("starts a new window when the policy changes", async () => {
    const uuid = await runningInstance(t);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 30 });
    await t.advance(25 * 60);
    await setIdle({ instance_uuid: uuid, idle_period_minutes: 10 });
    await t.advance(9 * 60);
    expect((await info(uuid)).data.status).toBe(2);
    await t.advance(60);
    expect((await info(uuid)).data.status).toBe(21);
  });

  it.each([5, 15, -10, 60.5])("refuses idle_period_minutes %s with 400 code 1", async (minutes) => {
    const uuid = await runningInstance(t);
    const answer = await setIdle({ instance_uuid: uuid, idle_period_minutes: minutes });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 1, msg: "idle_period_minutes: must be one of 0, 10, 30, 60, 120" });
  });

  it.each([
    ["idle_gpu_threshold", 101],
    ["idle_gpu_threshold", -1],
    ["idle_fb_threshold", 12.5],
    ["idle_fb_threshold", "50"],
  ])("refuses %s=%s with 400 code 1", async (field, value) => {
    const uuid = await runningInstance(t);
    const answer = await setIdle({ instance_uuid: uuid, idle_period_minutes: 10, [field]: value });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe(1);
    expect(answer.body.msg).toMatch(new RegExp(`^${field}: `));
  });

  it("refuses destroy=true on a subscription instance", async () => {
    const uuid = await runningInstance(t);
    await t.admin("POST", `/instances/${uuid}/force`, { charging_type: 2 });
    const answer = await setIdle({ instance_uuid: uuid, idle_period_minutes: 10, destroy: true });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe(1);
    expect((await setIdle({ instance_uuid: uuid, idle_period_minutes: 10, destroy: false })).body.code).toBe(
      0,
    );
  });

  it("refuses an instance in an abnormal state with code -1", async () => {
    const created = await createInstance(t);
    await t.admin("POST", `/instances/${created.instance_uuid}/force`, { status: 23 });
    const answer = await setIdle({ instance_uuid: created.instance_uuid, idle_period_minutes: 10 });
    expect([answer.status, answer.body.code]).toEqual([400, -1]);
  });

  it("refuses a missing or another user's instance with 404 code -1", async () => {
    const theirs = await createInstance(t, { key: "other-key" });
    for (const uuid of ["ins-missing", theirs.instance_uuid]) {
      const answer = await setIdle({ instance_uuid: uuid, idle_period_minutes: 10 });
      expect([answer.status, answer.body.code]).toEqual([404, -1]);
    }
  });

  it("refuses a utilisation outside 0..100 on the admin API", async () => {
    const uuid = await runningInstance(t);
    expect((await utilization(uuid, { gpu: 101, fb: 0 })).status).toBe(400);
    expect((await utilization(uuid, { gpu: 1, fb: 0, index: 1 })).status).toBe(400);
  });
});
