import Decimal from "decimal.js";
import { BILLING_PERIOD_SECONDS } from "pulumi-gpucloud/emulator";
import {
  createInstance,
  DEMO_USER,
  gpuUuid,
  instanceInfo,
  pod,
  runningInstance,
  startTestEmulator,
  type TestEmulator,
  HTTP_ERROR_STATUS,
} from "./helpers";

describe("emulator account", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ ...HTTP_ERROR_STATUS, balance: 1000 });
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  const balance = async () => (await t.api("GET", "/balance/info")).body.data.balance as number;
  const bills = async () => (await t.api("GET", "/bill/list", { query: { page_size: 100 } })).body.data;
  /** Pod hourly + GPU hourly * gpu_nums (docs/design/live-service-notes.md#prices). */
  const hourly = async (gpuNums: number) => {
    const gpus = (await t.api("GET", "/gpu/list")).body.data.gpu_list;
    const gpu = gpus.find((g: { gpu_name: string }) => g.gpu_name === "4090D");
    return new Decimal((await pod(t, "ComfyUI")).price.hour).plus(new Decimal(gpu.price.hour).times(gpuNums));
  };

  it("shows the starting balance and a card_balance", async () => {
    expect((await t.api("GET", "/balance/info")).body.data).toEqual({ balance: 1000, card_balance: 0 });
  });

  it("charges a running instance every hour and records each charge as a bill", async () => {
    const created = await createInstance(t, { gpuNums: 2 });
    const price = await hourly(2);
    await t.advance(2 * BILLING_PERIOD_SECONDS);
    expect(await balance()).toBe(new Decimal(1000).minus(price.times(2)).toNumber());
    const { bill_list, total } = await bills();
    expect(total).toBe(2);
    expect(bill_list[0]).toEqual({
      bill_id: expect.any(String),
      kind: "instance_hourly",
      resource_id: created.instance_uuid,
      amount: price.toFixed(8),
      start_time: created.create_time + BILLING_PERIOD_SECONDS,
      end_time: created.create_time + 2 * BILLING_PERIOD_SECONDS,
      create_time: created.create_time + 2 * BILLING_PERIOD_SECONDS,
    });
  });

  it("charges the used part of an hour on shutdown and nothing while stopped", async () => {
    const uuid = await runningInstance(t);
    await t.api("POST", "/instance/shutdown", { body: { instance_uuid: uuid } });
    await t.advance(10);
    const stoppedBalance = await balance();
    const price = await hourly(1);
    expect(stoppedBalance).toBe(
      new Decimal(1000).minus(price.times(70).dividedBy(3600).toDecimalPlaces(8)).toNumber(),
    );
    await t.advance(5 * BILLING_PERIOD_SECONDS);
    expect(await balance()).toBe(stoppedBalance);
    expect((await bills()).bill_list[0]).toMatchObject({ kind: "instance_partial_hour", resource_id: uuid });
  });

  it("charges the used part of an hour on destroy", async () => {
    const uuid = await runningInstance(t);
    await t.advance(1740);
    await t.api("POST", "/instance/destroy", { body: { instance_uuid: uuid } });
    expect((await bills()).bill_list[0]).toMatchObject({
      resource_id: uuid,
      amount: (await hourly(1)).dividedBy(2).toFixed(8),
    });
  });

  it("stops a running instance whose charge took the balance below zero", async () => {
    const uuid = await runningInstance(t);
    await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: 1 });
    // The first hour was pre-deducted at creation; the second hour's charge takes the balance below zero.
    await t.advance(2 * BILLING_PERIOD_SECONDS - 60);
    expect((await instanceInfo(t, uuid)).body.data.status).toBe(21);
    await t.advance(10);
    expect((await instanceInfo(t, uuid)).body.data.status).toBe(22);
    expect(await balance()).toBeLessThan(0);
  });

  it("does not charge a subscription instance by the hour", async () => {
    const uuid = await runningInstance(t);
    await t.admin("POST", `/instances/${uuid}/force`, { charging_type: 2 });
    const before = await balance();
    await t.advance(3 * BILLING_PERIOD_SECONDS);
    expect(await balance()).toBe(before);
  });

  it("pages bills with page and page_size", async () => {
    await createInstance(t);
    await t.advance(3 * BILLING_PERIOD_SECONDS);
    const page = (await t.api("GET", "/bill/list", { query: { page: 2, page_size: 2 } })).body.data;
    expect(page.total).toBe(3);
    expect(page.bill_list).toHaveLength(1);
  });

  describe("GET /recharge/list", () => {
    it("lists seeded recharge records with their fields", async () => {
      const { recharge_list, total } = (await t.api("GET", "/recharge/list")).body.data;
      expect(total).toBeGreaterThanOrEqual(2);
      for (const record of recharge_list) {
        expect(record).toEqual({
          amount: expect.any(Number),
          trade_time: expect.any(Number),
          pay_time: expect.any(Number),
          trade_number: expect.any(String),
        });
      }
    });

    it("filters trade_number fuzzily", async () => {
      const { recharge_list, total } = (
        await t.api("GET", "/recharge/list", { query: { trade_number: "202502" } })
      ).body.data;
      expect(total).toBe(1);
      expect(recharge_list[0].trade_number).toContain("202502");
    });

    it("takes page and page_size as strings", async () => {
      const data = (await t.api("GET", "/recharge/list", { query: { page: "2", page_size: "1" } })).body.data;
      expect(data.recharge_list).toHaveLength(1);
      expect(data.total).toBeGreaterThanOrEqual(2);
    });

    it("needs a key", async () => {
      expect((await t.api("GET", "/recharge/list", { key: null })).status).toBe(401);
    });
  });

  describe("the first hour is pre-deducted, so parallel creates cannot overdraw the balance", () => {
    const create = () => createBody().then((body) => t.api("POST", "/instance/create_by_pod", { body }));
    const createBody = async () => ({
      pod_uuid: (await pod(t, "ComfyUI")).uuid,
      gpu_uuid: await gpuUuid(t, "4090D"),
      gpu_nums: 1,
    });

    it.each([
      [1, 1],
      [3.5, 3],
    ])("with a balance of %s hours, 50 concurrent creates make %s instances", async (hours, made) => {
      const price = await hourly(1);
      await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: price.times(hours).toFixed(8) });
      const body = await createBody();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => t.api("POST", "/instance/create_by_pod", { body })),
      );
      const refused = answers.filter((a) => a.status === 400);
      expect(answers.filter((a) => a.body.code === 0)).toHaveLength(made);
      expect(refused).toHaveLength(50 - made);
      for (const answer of refused) expect(answer.body.msg).toMatch(/^insufficient balance: /);
      expect((await t.api("GET", "/instance/list")).body.data.total).toBe(made);
      expect(await balance()).toBe(
        price
          .times(hours - made)
          .toDecimalPlaces(8)
          .toNumber(),
      );
      await t.advance(BILLING_PERIOD_SECONDS);
      expect(await balance()).toBe(
        price
          .times(hours - made)
          .toDecimalPlaces(8)
          .toNumber(),
      );
      expect((await bills()).total).toBe(made);
    });

    it("shows the pre-deduction at once and gives back what a destroy in the first hour did not use", async () => {
      const price = await hourly(1);
      const { instance_uuid } = (await create()).body.data;
      expect(await balance()).toBe(new Decimal(1000).minus(price).toNumber());
      await t.advance(360);
      await t.api("POST", "/instance/destroy", { body: { instance_uuid } });
      expect(await balance()).toBe(
        new Decimal(1000).minus(price.dividedBy(10).toDecimalPlaces(8)).toNumber(),
      );
    });

    it("pre-deducts again on startup, and refuses a startup the balance does not cover", async () => {
      const price = await hourly(1);
      const uuid = await runningInstance(t);
      await t.api("POST", "/instance/shutdown", { body: { instance_uuid: uuid } });
      await t.advance(10);
      await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: price.minus("0.01").toFixed(8) });
      const refused = await t.api("POST", "/instance/startup", { body: { instance_uuid: uuid } });
      expect(refused.status).toBe(400);
      expect(refused.body.msg).toMatch(/^insufficient balance: /);
      await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: price.toFixed(8) });
      expect((await t.api("POST", "/instance/startup", { body: { instance_uuid: uuid } })).body.code).toBe(0);
      expect(await balance()).toBe(0);
      expect((await create()).status).toBe(400);
    });
  });

  it("refuses to create an instance when the balance does not cover one hour", async () => {
    const price = await hourly(8);
    await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: price.minus("0.01").toString() });
    const answer = await t.api("POST", "/instance/create_by_pod", {
      body: { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: await gpuUuid(t, "4090D"), gpu_nums: 8 },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe(1);
    expect(answer.body.msg).toMatch(/^insufficient balance: /);
  });
});
