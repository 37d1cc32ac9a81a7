import { Emulator, startEmulator } from "pulumi-gpucloud/emulator";
import {
  createInstance,
  DEMO_KEY,
  DEMO_USER,
  instanceInfo,
  runningInstance,
  startTestEmulator,
  type TestEmulator,
} from "./helpers";

const START = 1_800_000_000;

describe("the simulated time in the Date header", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startTime: START });
  });
  afterAll(() => t.close());

  const dateOf = (answer: { headers: Headers }) => Date.parse(answer.headers.get("date") ?? "") / 1000;

  it("sends it on API answers, failures, unknown paths, the admin API and instance services", async () => {
    const now = await t.now();
    expect(dateOf(await t.api("GET", "/gpu/list"))).toBe(now);
    expect(dateOf(await t.api("GET", "/instance/list", { key: "wrong" }))).toBe(now);
    expect(dateOf(await t.api("GET", "/no/such/path"))).toBe(now);
    expect(dateOf(await t.api("DELETE", "/instance/list"))).toBe(now);
    expect(dateOf(await t.admin("GET", "/clock"))).toBe(now);
    const { instance_uuid } = await createInstance(t);
    const url = (await instanceInfo(t, instance_uuid)).body.data.server_url[0];
    expect(Date.parse((await fetch(url)).headers.get("date")!) / 1000).toBe(now);
    expect(dateOf(await t.api("GET", "/pod/list", { key: null }))).toBe(now);
  });

  it("moves with the clock, in the HTTP date format", async () => {
    await t.advance(3600);
    const answer = await t.api("GET", "/gpu/list");
    expect(dateOf(answer)).toBe(await t.now());
    expect(answer.headers.get("date")).toMatch(
      /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
    );
  });
});

describe("durations", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({
      durations: { boot: 5, shutdown: 2, startup: 3, restart: 4, save_image: 7 },
    });
  });
  afterAll(() => t.close());

  const status = async (uuid: string) => (await instanceInfo(t, uuid)).body.data.status as number;
  const post = (path: string, uuid: string) => t.api("POST", path, { body: { instance_uuid: uuid } });

  it("drives every transition with the durations given", async () => {
    const { instance_uuid: uuid } = await createInstance(t);
    await t.advance(4);
    expect(await status(uuid)).toBe(1);
    await t.advance(1);
    expect(await status(uuid)).toBe(2);
    await post("/instance/restart", uuid);
    await t.advance(3);
    expect(await status(uuid)).toBe(27);
    await t.advance(1);
    expect(await status(uuid)).toBe(2);
    await post("/instance/save_image", uuid);
    await t.advance(6);
    expect((await instanceInfo(t, uuid)).body.data.save_image_status).toBe(1);
    await t.advance(1);
    expect((await instanceInfo(t, uuid)).body.data.save_image_status).toBe(2);
    expect((await t.api("GET", "/image/private/list")).body.data.image_list[0].save_image_status).toBe(2);
    await post("/instance/shutdown", uuid);
    await t.advance(2);
    expect(await status(uuid)).toBe(22);
    await post("/instance/startup", uuid);
    await t.advance(2);
    expect(await status(uuid)).toBe(24);
    await t.advance(1);
    expect(await status(uuid)).toBe(2);
  });

  it("refuses a duration that is not a whole number of seconds, or not a duration", () => {
    expect(() => new Emulator({ durations: { boot: -1 } })).toThrow("durations: boot: must be at least 0");
    expect(() => new Emulator({ durations: { boot: 1.5 } })).toThrow("durations: boot: must be an integer");
    expect(() => new Emulator({ durations: { warp: 1 } as never })).toThrow(
      "durations: has an unknown field: warp",
    );
  });
});

describe("utilization of new instances", () => {
  it("starts every new instance's GPUs at the given utilisation, so an idle policy does not stop them", async () => {
    const t = await startTestEmulator({ utilization: { gpu: 50, fb: 40 } });
    try {
      const uuid = await runningInstance(t, { gpuNums: 2, gpu: "4080" });
      await t.api("POST", "/instance/set_idle_close", {
        body: { instance_uuid: uuid, idle_period_minutes: 10 },
      });
      await t.advance(3600);
      expect((await instanceInfo(t, uuid)).body.data.status).toBe(2);
      const state = (await t.admin("GET", "/state")).body as unknown as {
        rooms: { instances: { utilization: unknown }[] };
      };
      expect(state.rooms.instances[0].utilization).toEqual([
        { gpu: 50, fb: 40 },
        { gpu: 50, fb: 40 },
      ]);
    } finally {
      await t.close();
    }
  });

  it("refuses a utilisation outside 0 to 100", () => {
    expect(() => new Emulator({ utilization: { gpu: 101, fb: 0 } })).toThrow(
      "utilization: gpu: must be at most 100",
    );
  });
});

describe("latency", () => {
  it("adds the given real latency to the path named, and the default to the others", async () => {
    const t = await startTestEmulator({ latency: { "/instance/list": 300, default: 100 } });
    try {
      const timed = async (path: string) => {
        const started = Date.now();
        expect((await t.api("GET", path)).status).toBe(200);
        return Date.now() - started;
      };
      expect(await timed("/instance/list")).toBeGreaterThanOrEqual(280);
      expect(await timed("/instance/list/")).toBeGreaterThanOrEqual(280);
      expect(await timed("/gpu/list")).toBeGreaterThanOrEqual(90);
    } finally {
      await t.close();
    }
  });

  it("refuses a path no API route answers, and a latency that is not whole milliseconds", async () => {
    await expect(startEmulator({ port: 0, latency: { "/instance/lits": 5 } })).rejects.toThrow(
      "latency: /instance/lits is not an API path",
    );
    await expect(startEmulator({ port: 0, latency: { "instance/list": 5 } })).rejects.toThrow(
      "latency: instance/list is not an API path",
    );
    expect(() => new Emulator({ latency: { default: -5 } })).toThrow("latency: default: must be at least 0");
  });

  it("accepts parametric API paths", async () => {
    const running = await startEmulator({ port: 0, timeScale: 0, latency: { "/assets/asset_x": 1 } });
    await running.close();
    expect(running.port).toBeGreaterThan(0);
  });
});

describe("admin calls that take a user", () => {
  it("accept one of the user's API keys instead of the user name", async () => {
    const t = await startTestEmulator({ apiKeys: ["team:first-key", "team:second-key", DEMO_KEY] });
    try {
      expect((await t.admin("PUT", "/users/second-key/balance", { balance: "12.5" })).body).toEqual({
        user: "team",
        balance: "12.50000000",
      });
      expect((await t.api("GET", "/balance/info", { key: "first-key" })).body.data.balance).toBe(12.5);
      expect((await t.admin("PUT", `/users/${DEMO_KEY}/balance`, { balance: 3 })).body.user).toBe(DEMO_USER);
      const unknown = await t.admin("PUT", "/users/not-a-key/balance", { balance: 3 });
      expect(unknown.status).toBe(404);
      expect(JSON.stringify(unknown.body)).not.toContain("not-a-key");
    } finally {
      await t.close();
    }
  });
});
