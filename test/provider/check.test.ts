import type { Harness } from "../harness";
import { UNKNOWN } from "../harness";
import { DOORS, gpucloudHarness } from "../support/providers";

const pod = { podUuid: "pod-1", gpuUuid: "gpu-1", gpuNums: 1 };

describe("check, before any API call", () => {
  let h: Harness;
  // No config and no environment: check must not need the cloud.
  beforeAll(async () => (h = await gpucloudHarness({ env: { PATH: process.env.PATH } })));
  afterAll(() => h.stop());

  describe("Instance", () => {
    it("fills the defaults: running true, waitTimeoutSeconds 900, waitForServices false, an autonamed title", async () => {
      expect(await h.check("Instance", pod)).toEqual({
        inputs: {
          ...pod,
          title: expect.stringMatching(/^test-[0-9a-f]{7}$/),
          running: true,
          waitTimeoutSeconds: 900,
          waitForServices: false,
        },
        failures: [],
      });
    });

    it("refuses gpuNums 3 and names the field and the allowed values", async () => {
      const { failures } = await h.check("Instance", { ...pod, gpuNums: 3 });
      expect(failures).toEqual([{ property: "gpuNums", reason: "gpuNums must be one of 1, 2, 4, 8, got 3" }]);
    });

    it("refuses a title of 51 characters and accepts 50", async () => {
      expect((await h.check("Instance", { ...pod, title: "x".repeat(51) })).failures).toEqual([
        { property: "title", reason: "title must be at most 50 characters, got 51" },
      ]);
      expect((await h.check("Instance", { ...pod, title: "é".repeat(50) })).failures).toEqual([]);
    });

    it("wants exactly one of podUuid and imageUuid", async () => {
      const none = await h.check("Instance", { gpuUuid: "g", gpuNums: 1 });
      expect(none.failures).toEqual([
        {
          property: "podUuid",
          reason: expect.stringContaining("exactly one of podUuid, imageUuid is required"),
        },
      ]);
      const both = await h.check("Instance", { ...pod, imageUuid: "img" });
      expect(both.failures).toEqual([
        { property: "imageUuid", reason: expect.stringContaining("only one of podUuid, imageUuid") },
      ]);
    });

    it("reports every broken rule at once, each by field", async () => {
      const { failures } = await h.check("Instance", {
        podUuid: "",
        gpuNums: "two",
        running: "yes",
        waitTimeoutSeconds: -1,
        shutdownAt: "tomorrow",
        colour: "red",
      });
      expect(failures.map((f) => f.property).sort()).toEqual([
        "colour",
        "gpuNums",
        "gpuUuid",
        "podUuid",
        "running",
        "shutdownAt",
        "waitTimeoutSeconds",
      ]);
    });

    it("normalises shutdownAt from ISO 8601 to Unix seconds", async () => {
      const { inputs } = await h.check("Instance", { ...pod, shutdownAt: "2030-01-02T03:04:05+01:00" });
      expect(inputs.shutdownAt).toBe(Date.UTC(2030, 0, 2, 2, 4, 5) / 1000);
    });

    it("refuses a shutdownAt that is not in the future by this machine's clock, in ISO 8601 and our words", async () => {
      const past = Math.floor(Date.now() / 1000) - 60;
      const { failures } = await h.check("Instance", { ...pod, shutdownAt: past });
      expect(failures).toEqual([
        {
          property: "shutdownAt",
          reason: expect.stringMatching(
            /^shutdownAt must be in the future: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ is not after now \(.*Z by this machine's clock; at apply time the cloud's clock decides/,
          ),
        },
      ]);
      expect(failures[0].reason).toContain(new Date(past * 1000).toISOString().replace(".000Z", "Z"));
      expect(failures[0].reason).not.toContain(String(past));
    });

    it.each([
      ["tomorrow", '"tomorrow"'],
      ["2030-01-02T03:04:05", '"2030-01-02T03:04:05"'],
      [-1, "-1"],
      [1.5, "1.5"],
      [1e20, "100000000000000000000"],
      [true, "true"],
    ])("refuses shutdownAt %p with the rule in our words, not the library's", async (value, shown) => {
      const { failures } = await h.check("Instance", { ...pod, shutdownAt: value });
      expect(failures).toEqual([
        {
          property: "shutdownAt",
          reason:
            "shutdownAt must be Unix seconds (a positive whole number) or an ISO 8601 time with a zone, " +
            `e.g. 2026-01-02T03:04:05Z, got ${shown}`,
        },
      ]);
    });

    it("says a missing input is required, and what a value of the wrong type was", async () => {
      const { podUuid, gpuUuid } = pod;
      expect((await h.check("Instance", { podUuid, gpuUuid })).failures).toEqual([
        { property: "gpuNums", reason: "gpuNums is required: it must be one of 1, 2, 4, 8" },
      ]);
      expect((await h.check("Instance", { ...pod, gpuNums: "2", running: "yes" })).failures).toEqual([
        { property: "gpuNums", reason: "gpuNums must be one of 1, 2, 4, 8, got a string" },
        { property: "running", reason: "running must be a boolean, got a string" },
      ]);
    });

    it("says a shutdownAt in milliseconds seems to be one", async () => {
      const inMs = Date.UTC(2030, 0, 1);
      const { failures } = await h.check("Instance", { ...pod, shutdownAt: inMs });
      expect(failures).toEqual([
        {
          property: "shutdownAt",
          reason: expect.stringMatching(/, got 1893456000000 \(milliseconds, it seems: divide by 1000\)$/),
        },
      ]);
    });

    it("refuses a shutdownAt for an instance that should be stopped", async () => {
      const { failures } = await h.check("Instance", { ...pod, running: false, shutdownAt: 1_900_000_000 });
      expect(failures).toEqual([
        { property: "shutdownAt", reason: expect.stringContaining("needs running: true") },
      ]);
    });

    it("skips the rules of unknown values during preview, never failing on them", async () => {
      const news = {
        podUuid: UNKNOWN,
        gpuUuid: UNKNOWN,
        gpuNums: UNKNOWN,
        title: UNKNOWN,
        shutdownAt: UNKNOWN,
      };
      expect(await h.check("Instance", news)).toEqual({
        inputs: { ...news, running: true, waitTimeoutSeconds: 900, waitForServices: false },
        failures: [],
      });
    });
  });

  describe("IdleClosePolicy", () => {
    it("fills the defaults and checks periods and thresholds", async () => {
      expect(await h.check("IdleClosePolicy", { instanceUuid: "i", idlePeriodMinutes: 30 })).toEqual({
        inputs: {
          instanceUuid: "i",
          idlePeriodMinutes: 30,
          destroyOnIdle: false,
          gpuThreshold: 0,
          memoryThreshold: 0,
        },
        failures: [],
      });
      const { failures } = await h.check("IdleClosePolicy", {
        instanceUuid: "i",
        idlePeriodMinutes: 0,
        gpuThreshold: 101,
        memoryThreshold: 2.5,
      });
      expect(failures).toEqual([
        { property: "idlePeriodMinutes", reason: "idlePeriodMinutes must be one of 10, 30, 60, 120, got 0" },
        { property: "gpuThreshold", reason: "gpuThreshold must be an integer from 0 to 100" },
        {
          property: "memoryThreshold",
          reason: "memoryThreshold must be an integer from 0 to 100, got a fractional number",
        },
      ]);
    });
  });

  describe("PersonalImage", () => {
    it("wants exactly one of instanceUuid and adoptImageUuid", async () => {
      expect((await h.check("PersonalImage", { instanceUuid: "i" })).failures).toEqual([]);
      expect((await h.check("PersonalImage", {})).failures).toEqual([
        {
          property: "instanceUuid",
          reason: expect.stringContaining("exactly one of instanceUuid, adoptImageUuid"),
        },
      ]);
      expect((await h.check("PersonalImage", { instanceUuid: UNKNOWN })).failures).toEqual([]);
    });

    it("takes no title: save_image has none", async () => {
      expect((await h.check("PersonalImage", { instanceUuid: "i", title: "mine" })).failures).toEqual([
        { property: "title", reason: expect.stringContaining("title is not an input of this resource") },
      ]);
    });
  });
});

describe("diff", () => {
  let h: Harness;
  beforeAll(async () => (h = await gpucloudHarness({ env: { PATH: process.env.PATH } })));
  afterAll(() => h.stop());

  const state = {
    ...pod,
    running: true,
    waitTimeoutSeconds: 900,
    title: "a",
    instanceUuid: "i-1",
    status: 2,
  };

  it("updates title, running and shutdownAt in place", async () => {
    expect(
      await h.diff("Instance", "i-1", state, {
        ...pod,
        running: false,
        waitTimeoutSeconds: 900,
        title: "b",
        shutdownAt: 1_900_000_000,
      }),
    ).toEqual({
      changes: "some",
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("replaces on a change of gpuNums or pod", async () => {
    const diff = await h.diff("Instance", "i-1", state, {
      ...pod,
      podUuid: "pod-2",
      gpuNums: 2,
      running: true,
      waitTimeoutSeconds: 900,
      title: "a",
    });
    expect(diff.changes).toBe("some");
    expect(diff.replaces.sort()).toEqual(["gpuNums", "podUuid"]);
  });

  it("sees no change when the program leaves out the title the state holds: check keeps it", async () => {
    const news = await h.checked("Instance", pod, state);
    expect(news.title).toBe("a");
    expect((await h.diff("Instance", "i-1", state, news)).changes).toBe("none");
  });

  it("plans a replacement when a replace field is unknown, an update when an in-place field is", async () => {
    expect(
      await h.diff("Instance", "i-1", state, {
        ...pod,
        gpuUuid: UNKNOWN,
        running: true,
        waitTimeoutSeconds: 900,
        title: "a",
      }),
    ).toMatchObject({
      changes: "some",
      replaces: ["gpuUuid"],
    });
    expect(
      await h.diff("Instance", "i-1", state, {
        ...pod,
        running: true,
        waitTimeoutSeconds: 900,
        title: UNKNOWN,
      }),
    ).toMatchObject({
      changes: "some",
      replaces: [],
    });
  });

  it("treats adopting the instance already in state as no change", async () => {
    expect(
      (
        await h.diff("Instance", "i-1", state, {
          ...pod,
          running: true,
          waitTimeoutSeconds: 900,
          title: "a",
          adoptInstanceUuid: "i-1",
        })
      ).changes,
    ).toBe("none");
    expect(
      (
        await h.diff("Instance", "i-1", state, {
          ...pod,
          running: true,
          waitTimeoutSeconds: 900,
          title: "a",
          adoptInstanceUuid: "i-2",
        })
      ).replaces,
    ).toEqual(["adoptInstanceUuid"]);
  });

  it("updates every policy field in place and replaces on another instance", async () => {
    const policy = {
      instanceUuid: "i-1",
      idlePeriodMinutes: 10,
      destroyOnIdle: false,
      gpuThreshold: 0,
      memoryThreshold: 0,
    };
    expect(
      await h.diff("IdleClosePolicy", "i-1", policy, {
        ...policy,
        idlePeriodMinutes: 60,
        destroyOnIdle: true,
        gpuThreshold: 5,
        memoryThreshold: 100,
      }),
    ).toMatchObject({ changes: "some", replaces: [] });
    expect(await h.diff("IdleClosePolicy", "i-1", policy, { ...policy, instanceUuid: "i-2" })).toMatchObject({
      changes: "some",
      replaces: ["instanceUuid"],
    });
    expect(await h.diff("IdleClosePolicy", "i-1", policy, policy)).toMatchObject({
      changes: "none",
      replaces: [],
    });
  });
});

describe.each(DOORS)("check of a shutdownAt the state already holds, through the %s door", (door) => {
  let h: Harness;
  beforeAll(async () => (h = await gpucloudHarness({ door, env: { PATH: process.env.PATH } })));
  afterAll(() => h.stop());

  const anHourAgo = Math.floor(Date.now() / 1000) - 3600;
  const stored = (shutdownAt: number) => ({
    ...pod,
    running: true,
    waitTimeoutSeconds: 900,
    waitForServices: false,
    shutdownAt,
  });

  it("passes a time that has passed since it was set, so a preview of the unchanged program does not fail", async () => {
    const news = { ...pod, shutdownAt: new Date(anHourAgo * 1000).toISOString() };
    const { inputs, failures } = await h.check("Instance", news, stored(anHourAgo));
    expect(failures).toEqual([]);
    expect(inputs.shutdownAt).toBe(anHourAgo);
  });

  it("refuses it with a change that replaces the instance: the new one's create could not set it", async () => {
    const { failures } = await h.check(
      "Instance",
      { ...pod, gpuNums: 2, shutdownAt: anHourAgo },
      stored(anHourAgo),
    );
    expect(failures).toEqual([
      { property: "shutdownAt", reason: expect.stringMatching(/^shutdownAt must be in the future: /) },
    ]);
  });

  it("refuses a past time the state does not hold, saying to set a later one or remove it", async () => {
    const { failures } = await h.check("Instance", { ...pod, shutdownAt: anHourAgo }, stored(anHourAgo + 60));
    expect(failures).toEqual([
      {
        property: "shutdownAt",
        reason: expect.stringMatching(
          /^shutdownAt must be in the future: .* Set a later time, or remove shutdownAt: a shutdown whose time has passed has nothing left to schedule\.$/,
        ),
      },
    ]);
  });
});
