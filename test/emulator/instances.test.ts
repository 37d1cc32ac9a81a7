import { INSTANCE_TRANSITIONS, SAVE_IMAGE_SECONDS } from "pulumi-gpucloud/emulator";
import {
  createInstance,
  gpuUuid,
  instanceInfo,
  pod,
  runningInstance,
  startTestEmulator,
  type TestEmulator,
  HTTP_ERROR_STATUS,
} from "./helpers";

describe("emulator instances", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ ...HTTP_ERROR_STATUS, apiKeys: ["demo-key", "other:other-key"] });
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  const post = (path: string, body: unknown, key?: string) => t.api("POST", path, { body, key });
  const status = async (uuid: string) => (await instanceInfo(t, uuid)).body.data.status as number;

  describe("POST /instance/create_by_pod", () => {
    it("creates an instance in status 1 with the creation fields and the latest pod tag", async () => {
      const comfy = await pod(t, "ComfyUI");
      const answer = await post("/instance/create_by_pod", {
        pod_uuid: comfy.uuid,
        gpu_uuid: await gpuUuid(t, "5090"),
        gpu_nums: 2,
      });
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual({
        instance_uuid: expect.any(String),
        title: "",
        status: 1,
        create_time: await t.now(),
        start_time: 0,
        save_image_status: 0,
        charging_type: 1,
        shutdown_regular: { shutdown_time: 0, enable: false },
        image_uuid: comfy.uuid,
        image_name: "ComfyUI",
        image_tag: comfy.pod_tag[comfy.pod_tag.length - 1],
        gpu_uuid: await gpuUuid(t, "5090"),
        gpu_name: "5090",
        gpu_nums: 2,
      });
    });

    it("uses the pod_tag given", async () => {
      const comfy = await pod(t, "ComfyUI");
      const answer = await post("/instance/create_by_pod", {
        pod_uuid: comfy.uuid,
        pod_tag: comfy.pod_tag[0],
        gpu_uuid: await gpuUuid(t, "4080"),
        gpu_nums: 1,
      });
      expect(answer.body.data.image_tag).toBe(comfy.pod_tag[0]);
    });

    it.each([1, 2, 4, 8])("accepts gpu_nums %i", async (gpuNums) => {
      expect((await createInstance(t, { gpuNums, gpu: "4080" })).gpu_nums).toBe(gpuNums);
    });

    it.each([0, 3, 16, 1.5])("refuses gpu_nums %s with 400 code 1", async (gpuNums) => {
      const answer = await post("/instance/create_by_pod", {
        pod_uuid: (await pod(t, "ComfyUI")).uuid,
        gpu_uuid: await gpuUuid(t, "4080"),
        gpu_nums: gpuNums,
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 1, msg: "gpu_nums: must be one of 1, 2, 4, 8" });
    });

    it("answers an unknown pod as a missing image: 404 code -1", async () => {
      const answer = await post("/instance/create_by_pod", {
        pod_uuid: "pod-missing",
        gpu_uuid: await gpuUuid(t, "4080"),
        gpu_nums: 1,
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({
        code: -1,
        msg: expect.stringMatching(/^pod not found: pod-missing/),
      });
    });

    it("refuses an unknown tag, an unknown GPU and an invalid GPU with 400 code 1", async () => {
      const comfy = await pod(t, "ComfyUI");
      const gpu = await gpuUuid(t, "4080");
      const invalid = (await t.api("GET", "/gpu/list")).body.data.gpu_list.find(
        (g: { status: number }) => g.status === 0,
      ).gpu_uuid;
      const cases = [
        [{ pod_uuid: comfy.uuid, pod_tag: "v0.0.0", gpu_uuid: gpu, gpu_nums: 1 }, /^pod_tag: /],
        [{ pod_uuid: comfy.uuid, gpu_uuid: "gpu-missing", gpu_nums: 1 }, /^gpu_uuid: /],
        [{ pod_uuid: comfy.uuid, gpu_uuid: invalid, gpu_nums: 1 }, /^gpu_uuid: .*not available/],
      ] as const;
      for (const [body, msg] of cases) {
        const answer = await post("/instance/create_by_pod", body);
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe(1);
        expect(answer.body.msg).toMatch(msg);
      }
      expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
    });
  });

  describe("POST /instance/create_by_image", () => {
    it("creates from a market image", async () => {
      const image = (await t.api("GET", "/image/market/list", { key: null })).body.data.image_list[0];
      const answer = await post("/instance/create_by_image", {
        image_uuid: image.uuid,
        gpu_uuid: await gpuUuid(t, "4090D"),
        gpu_nums: 4,
      });
      expect(answer.body.data).toMatchObject({
        status: 1,
        image_uuid: image.uuid,
        gpu_nums: 4,
        charging_type: 1,
      });
    });

    it("creates from the caller's own saved image but not from another user's", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/save_image", { instance_uuid: uuid });
      await t.advance(SAVE_IMAGE_SECONDS);
      const image = (await t.api("GET", "/image/private/list")).body.data.image_list[0];
      const gpu = await gpuUuid(t, "4090D");
      const mine = await post("/instance/create_by_image", {
        image_uuid: image.uuid,
        gpu_uuid: gpu,
        gpu_nums: 1,
      });
      expect(mine.body.data).toMatchObject({ image_uuid: image.uuid, status: 1 });
      const theirs = await post(
        "/instance/create_by_image",
        { image_uuid: image.uuid, gpu_uuid: gpu, gpu_nums: 1 },
        "other-key",
      );
      expect(theirs.status).toBe(404);
      expect(theirs.body).toMatchObject({ code: -1, msg: expect.stringMatching(/^image not found: /) });
    });

    it("answers an unknown image with the API's missing-image code -1 (HTTP 404)", async () => {
      const answer = await post("/instance/create_by_image", {
        image_uuid: "img-missing",
        gpu_uuid: await gpuUuid(t, "4090D"),
        gpu_nums: 1,
      });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe(-1);
      expect(answer.body.msg).toContain("img-missing");
      expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
    });

    it("refuses an image that is still being saved", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/save_image", { instance_uuid: uuid });
      const image = (await t.api("GET", "/image/private/list")).body.data.image_list[0];
      const answer = await post("/instance/create_by_image", {
        image_uuid: image.uuid,
        gpu_uuid: await gpuUuid(t, "4090D"),
        gpu_nums: 1,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.msg).toContain("not ready");
    });
  });

  describe("list and info", () => {
    it("pages the caller's instances with a total and shows server_url, server_map and idle_close", async () => {
      for (let i = 0; i < 3; i += 1) await createInstance(t);
      await createInstance(t, { key: "other-key" });
      const first = (await t.api("GET", "/instance/list", { query: { page: 1, page_size: 2 } })).body.data;
      const second = (await t.api("GET", "/instance/list", { query: { page: 2, page_size: 2 } })).body.data;
      expect(first.total).toBe(3);
      expect(first.instance_list).toHaveLength(2);
      expect(second.instance_list).toHaveLength(1);
      const record = first.instance_list[0];
      expect(record.server_url).toEqual([expect.stringMatching(/^https?:\/\//)]);
      expect(record.idle_close).toBeNull();
      expect(record.server_map).toEqual([
        { title: expect.any(String), url: record.server_url[0], port_type: "http", protocol: "tcp" },
        {
          title: expect.any(String),
          url: expect.any(String),
          port_type: "ssh",
          protocol: "tcp",
          ssh_info: {
            host: expect.any(String),
            port: expect.any(Number),
            username: "root",
            password: expect.any(String),
          },
        },
      ]);
    });

    it("gives every instance its own random SSH password", async () => {
      const a = await createInstance(t);
      const b = await createInstance(t);
      const password = async (uuid: string) =>
        (await instanceInfo(t, uuid)).body.data.server_map[1].ssh_info.password as string;
      expect(await password(a.instance_uuid)).not.toBe(await password(b.instance_uuid));
      expect((await password(a.instance_uuid)).length).toBeGreaterThanOrEqual(16);
    });

    it("reaches status 2 sixty seconds after creation, not before", async () => {
      const created = await createInstance(t);
      expect(INSTANCE_TRANSITIONS.create.seconds).toBe(60);
      await t.advance(59);
      expect(await status(created.instance_uuid)).toBe(1);
      await t.advance(1);
      const info = (await instanceInfo(t, created.instance_uuid)).body.data;
      expect(info.status).toBe(2);
      expect(info.start_time).toBe(created.create_time + 60);
    });

    it("answers info on another user's instance with 404 code -1", async () => {
      const created = await createInstance(t, { key: "other-key" });
      const answer = await instanceInfo(t, created.instance_uuid);
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe(-1);
      expect(answer.body.msg).toContain("not found");
    });

    it("requires instance_uuid on info", async () => {
      const answer = await t.api("GET", "/instance/info");
      expect(answer.body).toEqual({ code: 1, msg: "instance_uuid: is required" });
    });
  });

  describe("POST /instance/update_title", () => {
    it("sets a title of 50 characters and shows it in info", async () => {
      const created = await createInstance(t);
      const title = "t".repeat(50);
      expect(
        (await post("/instance/update_title", { instance_uuid: created.instance_uuid, title })).body,
      ).toEqual({ code: 0, msg: "success" });
      expect((await instanceInfo(t, created.instance_uuid)).body.data.title).toBe(title);
    });

    it("accepts an empty title and a missing one (both clear it)", async () => {
      const created = await createInstance(t);
      await post("/instance/update_title", { instance_uuid: created.instance_uuid, title: "x" });
      expect(
        (await post("/instance/update_title", { instance_uuid: created.instance_uuid, title: "" })).body.code,
      ).toBe(0);
      expect((await instanceInfo(t, created.instance_uuid)).body.data.title).toBe("");
      expect((await post("/instance/update_title", { instance_uuid: created.instance_uuid })).body.code).toBe(
        0,
      );
    });

    it("counts characters, not UTF-16 units: 50 emoji fit", async () => {
      const created = await createInstance(t);
      expect(
        (
          await post("/instance/update_title", {
            instance_uuid: created.instance_uuid,
            title: "🚀".repeat(50),
          })
        ).body.code,
      ).toBe(0);
    });

    it("refuses a title of 51 characters with code 1", async () => {
      const created = await createInstance(t);
      const answer = await post("/instance/update_title", {
        instance_uuid: created.instance_uuid,
        title: "t".repeat(51),
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 1, msg: "title: must be at most 50 characters" });
    });

    it("refuses an unparsable body with code 1", async () => {
      const answer = await t.api("POST", "/instance/update_title", { rawBody: "{" });
      expect(answer.body.code).toBe(1);
    });

    it("refuses a missing instance with code 1", async () => {
      const answer = await post("/instance/update_title", { instance_uuid: "ins-missing", title: "x" });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe(1);
    });

    it("refuses another user's instance with code 1", async () => {
      const created = await createInstance(t, { key: "other-key" });
      const answer = await post("/instance/update_title", {
        instance_uuid: created.instance_uuid,
        title: "x",
      });
      expect(answer.body.code).toBe(1);
    });

    it("refuses a deleted instance with code 1", async () => {
      const created = await createInstance(t);
      await post("/instance/destroy", { instance_uuid: created.instance_uuid });
      const answer = await post("/instance/update_title", {
        instance_uuid: created.instance_uuid,
        title: "x",
      });
      expect(answer.body.code).toBe(1);
    });

    it("answers code 2 when not logged in", async () => {
      const answer = await t.api("POST", "/instance/update_title", {
        key: null,
        body: { instance_uuid: "x", title: "y" },
      });
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe(2);
    });
  });

  describe("POST /instance/destroy", () => {
    it("removes the instance for good; a second destroy answers 404 code -1", async () => {
      const created = await createInstance(t);
      expect((await post("/instance/destroy", { instance_uuid: created.instance_uuid })).body).toEqual({
        code: 0,
        msg: "success",
      });
      expect((await instanceInfo(t, created.instance_uuid)).status).toBe(404);
      const again = await post("/instance/destroy", { instance_uuid: created.instance_uuid });
      expect(again.status).toBe(404);
      expect(again.body.code).toBe(-1);
    });

    it("cannot destroy another user's instance", async () => {
      const created = await createInstance(t, { key: "other-key" });
      expect((await post("/instance/destroy", { instance_uuid: created.instance_uuid })).status).toBe(404);
      expect((await instanceInfo(t, created.instance_uuid, "other-key")).status).toBe(200);
    });
  });

  describe("power operations", () => {
    it("shuts down through 21 to 22 in 10 s", async () => {
      const uuid = await runningInstance(t);
      expect((await post("/instance/shutdown", { instance_uuid: uuid })).body).toEqual({
        code: 0,
        msg: "success",
      });
      expect(await status(uuid)).toBe(21);
      await t.advance(9);
      expect(await status(uuid)).toBe(21);
      await t.advance(1);
      expect(await status(uuid)).toBe(22);
    });

    it("starts up through 24 to 2 in 30 s", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/shutdown", { instance_uuid: uuid });
      await t.advance(10);
      expect((await post("/instance/startup", { instance_uuid: uuid })).body.code).toBe(0);
      expect(await status(uuid)).toBe(24);
      await t.advance(29);
      expect(await status(uuid)).toBe(24);
      await t.advance(1);
      expect(await status(uuid)).toBe(2);
    });

    it("starts up on another GPU when gpu_uuid and gpu_nums are given", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/shutdown", { instance_uuid: uuid });
      await t.advance(10);
      await post("/instance/startup", {
        instance_uuid: uuid,
        gpu_uuid: await gpuUuid(t, "5090"),
        gpu_nums: 4,
      });
      expect((await instanceInfo(t, uuid)).body.data).toMatchObject({ gpu_name: "5090", gpu_nums: 4 });
    });

    it("restarts through 27 to 2 in 20 s", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/restart", { instance_uuid: uuid });
      expect(await status(uuid)).toBe(27);
      await t.advance(19);
      expect(await status(uuid)).toBe(27);
      await t.advance(1);
      expect(await status(uuid)).toBe(2);
    });

    it.each([
      ["shutdown", "a starting instance", 0],
      ["restart", "a starting instance", 0],
      ["startup", "a running instance", 60],
      ["shutdown_timer", "a starting instance", 0],
    ])("refuses %s on %s with 400 code -1", async (operation, _state, wait) => {
      const created = await createInstance(t);
      await t.advance(wait);
      const answer = await post(`/instance/${operation}`, {
        instance_uuid: created.instance_uuid,
        enable: true,
        shutdown_time: (await t.now()) + 600,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(-1);
    });

    it("refuses a second shutdown of a stopped instance with 400 code -1", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/shutdown", { instance_uuid: uuid });
      await t.advance(10);
      expect((await post("/instance/shutdown", { instance_uuid: uuid })).body.code).toBe(-1);
    });

    it("answers a power operation on a missing instance with 404 code -1", async () => {
      for (const operation of ["startup", "shutdown", "restart", "save_image"]) {
        const answer = await post(`/instance/${operation}`, { instance_uuid: "ins-missing" });
        expect([answer.status, answer.body.code]).toEqual([404, -1]);
      }
    });
  });

  describe("POST /_emulator/instances/{uuid}/force", () => {
    const force = (uuid: string, body?: unknown) => t.admin("POST", `/instances/${uuid}/force`, body);
    const balance = async () => (await t.api("GET", "/balance/info")).body.data.balance as number;

    it("stops a booting instance abnormally: the boot never ends, billing stops, and startup runs it again", async () => {
      const { instance_uuid: uuid } = await createInstance(t);
      await t.advance(30);
      expect((await force(uuid, { status: 23 })).status).toBe(200);
      expect(await status(uuid)).toBe(23);
      const stopped = await balance();
      await t.advance(2 * 3600);
      expect(await status(uuid)).toBe(23);
      expect(await balance()).toBe(stopped);
      expect((await post("/instance/startup", { instance_uuid: uuid })).body.code).toBe(0);
      expect(await status(uuid)).toBe(24);
      await t.advance(30);
      expect(await status(uuid)).toBe(2);
    });

    it("leaves an instance forced into a transitional status there, as a stuck one would stay", async () => {
      const uuid = await runningInstance(t);
      await force(uuid, { status: 1 });
      await t.advance(3600);
      expect(await status(uuid)).toBe(1);
    });

    it.each([
      [
        "a status the cloud does not have",
        { status: 99 },
        "status: must be one of 0, 1, 2, 3, 4, 21, 22, 23, 24, 27",
      ],
      ["a negative status", { status: -7 }, "status: must be one of 0, 1, 2, 3, 4, 21, 22, 23, 24, 27"],
      ["an unknown billing type", { charging_type: 3 }, "charging_type: must be one of 1, 2"],
      ["a misspelt field", { stauts: 23 }, "body: has an unknown field: stauts"],
      ["an empty body", {}, "body: must give status, charging_type or both"],
      ["no body", undefined, "body: must give status, charging_type or both"],
    ])("refuses %s, naming the field, and changes nothing", async (_what, body, message) => {
      const uuid = await runningInstance(t);
      const answer = await force(uuid, body);
      expect(answer.status).toBe(400);
      expect(answer.body.msg).toBe(message);
      expect(await status(uuid)).toBe(2);
    });
  });

  describe("POST /instance/shutdown_timer", () => {
    it("shows the schedule in shutdown_regular and shuts the instance down at that time", async () => {
      const uuid = await runningInstance(t);
      const at = (await t.now()) + 600;
      expect(
        (await post("/instance/shutdown_timer", { instance_uuid: uuid, enable: true, shutdown_time: at }))
          .body,
      ).toEqual({ code: 0, msg: "success" });
      expect((await instanceInfo(t, uuid)).body.data.shutdown_regular).toEqual({
        shutdown_time: at,
        enable: true,
      });
      await t.advance(599);
      expect(await status(uuid)).toBe(2);
      await t.advance(1);
      expect(await status(uuid)).toBe(21);
      await t.advance(10);
      const info = (await instanceInfo(t, uuid)).body.data;
      expect(info.status).toBe(22);
      expect(info.shutdown_regular).toEqual({ shutdown_time: at, enable: false });
    });

    it("cancels with enable=false or shutdown_time=0", async () => {
      const uuid = await runningInstance(t);
      for (const cancel of [
        { enable: false, shutdown_time: (await t.now()) + 600 },
        { enable: true, shutdown_time: 0 },
      ]) {
        await post("/instance/shutdown_timer", {
          instance_uuid: uuid,
          enable: true,
          shutdown_time: (await t.now()) + 600,
        });
        await post("/instance/shutdown_timer", { instance_uuid: uuid, ...cancel });
        expect((await instanceInfo(t, uuid)).body.data.shutdown_regular).toEqual({
          shutdown_time: 0,
          enable: false,
        });
      }
      await t.advance(700);
      expect(await status(uuid)).toBe(2);
    });

    it("refuses a time in the past with 400 code 1", async () => {
      const uuid = await runningInstance(t);
      const answer = await post("/instance/shutdown_timer", {
        instance_uuid: uuid,
        enable: true,
        shutdown_time: (await t.now()) - 1,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.msg).toMatch(/^shutdown_time: /);
    });

    it("requires enable as a boolean", async () => {
      const uuid = await runningInstance(t);
      const answer = await post("/instance/shutdown_timer", {
        instance_uuid: uuid,
        enable: "yes",
        shutdown_time: 0,
      });
      expect(answer.body).toEqual({ code: 1, msg: "enable: must be a boolean" });
    });
  });

  describe("POST /instance/save_image", () => {
    it("goes 1 then 2 after 120 s and adds a personal image that goes 1 then 2", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/update_title", { instance_uuid: uuid, title: "trainer" });
      expect((await post("/instance/save_image", { instance_uuid: uuid })).body).toEqual({
        code: 0,
        msg: "success",
      });
      expect((await instanceInfo(t, uuid)).body.data.save_image_status).toBe(1);
      const listed = (await t.api("GET", "/image/private/list")).body.data;
      expect(listed.total).toBe(1);
      expect(listed.image_list[0]).toEqual({
        title: expect.stringContaining("trainer"),
        uuid: expect.any(String),
        remark: expect.any(String),
        layer_count: expect.any(Number),
        size: expect.any(Number),
        pod_uuid: (await pod(t, "ComfyUI")).uuid,
        pod_tag: expect.any(String),
        save_image_status: 1,
        create_time: await t.now(),
      });
      await t.advance(SAVE_IMAGE_SECONDS - 1);
      expect((await instanceInfo(t, uuid)).body.data.save_image_status).toBe(1);
      await t.advance(1);
      expect((await instanceInfo(t, uuid)).body.data.save_image_status).toBe(2);
      expect((await t.api("GET", "/image/private/list")).body.data.image_list[0].save_image_status).toBe(2);
    });

    it("refuses a second save while one is uploading with 400 code -1", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/save_image", { instance_uuid: uuid });
      expect((await post("/instance/save_image", { instance_uuid: uuid })).body.code).toBe(-1);
    });

    it("refuses to save a starting instance with 400 code -1", async () => {
      const created = await createInstance(t);
      const answer = await post("/instance/save_image", { instance_uuid: created.instance_uuid });
      expect([answer.status, answer.body.code]).toEqual([400, -1]);
    });
  });

  describe("personal images", () => {
    it("lists only the caller's images and deletes them; another user's image looks missing", async () => {
      const uuid = await runningInstance(t);
      await post("/instance/save_image", { instance_uuid: uuid });
      const image = (await t.api("GET", "/image/private/list")).body.data.image_list[0];
      expect((await t.api("GET", "/image/private/list", { key: "other-key" })).body.data).toEqual({
        image_list: [],
        total: 0,
      });
      const foreign = await post("/image/private/delete", { image_uuid: image.uuid }, "other-key");
      expect([foreign.status, foreign.body.code]).toEqual([404, -1]);
      expect((await post("/image/private/delete", { image_uuid: image.uuid })).body).toEqual({
        code: 0,
        msg: "success",
      });
      expect((await t.api("GET", "/image/private/list")).body.data.total).toBe(0);
      expect((await post("/image/private/delete", { image_uuid: image.uuid })).body.code).toBe(-1);
    });

    it("needs a key for the private list", async () => {
      const answer = await t.api("GET", "/image/private/list", { key: null });
      expect([answer.status, answer.body.code]).toEqual([401, 2]);
    });
  });
});
