/**
 * A create refused with a Retry-After of an hour, or of years: it must fail at once, saying how long the
 * cloud asked to wait, instead of stalling `pulumi up` silently (or, beyond 2^31 ms, spinning a timer that
 * fires at once), through either front door. The cloud here is a stand-in that answers only what a create
 * needs.
 */
import type { Harness } from "../harness";
import { foreignServer, json, POD_PAGE, type ForeignServer } from "../sdk/foreign-server";
import { DOORS, gpucloudHarness, providerConfig } from "../support/providers";

const EMPTY_LIST = { code: 0, msg: "success", data: { instance_list: [], total: 0 } };

const CASES = [
  ["an hour", "3600", /asked to wait 60 min/],
  ["years", "999999999", /asked to wait 32 years/],
] as const;

describe.each(
  DOORS.flatMap((door) => CASES.map(([name, retryAfter, named]) => [door, name, retryAfter, named] as const)),
)("through the %s door, a create answered 429 with a Retry-After of %s", (door, _case, retryAfter, named) => {
  let cloud: ForeignServer;
  let h: Harness;
  beforeAll(async () => {
    cloud = await foreignServer((req, res) => {
      const path = (req.url ?? "").split("?")[0];
      if (path.endsWith("/pod/list")) return json(res, 200, POD_PAGE);
      if (path.endsWith("/instance/list")) return json(res, 200, EMPTY_LIST);
      json(res, 429, { code: 429, msg: "too many requests" }, { "retry-after": retryAfter });
    });
    h = await gpucloudHarness({ door, config: providerConfig(cloud.url) });
  });
  afterAll(async () => {
    await h?.stop();
    await cloud?.close();
  });

  it("fails at once, naming the wait, and sends the create only once", async () => {
    const inputs = await h.checked("Instance", { podUuid: "pod-1", gpuUuid: "gpu-1", gpuNums: 1 });
    const err = await h.create("Instance", inputs).then(
      () => new Error("the create succeeded"),
      (e: Error) => e,
    );
    expect(err.message).toMatch(
      /^Could not create instance: the cloud refused the create call with a rate limit/,
    );
    expect(err.message).toMatch(named);
    expect(err.message).toMatch(
      /longer than this create may wait, so it was not sent again and no instance was made/,
    );
    expect(cloud.hits.filter((hit) => hit.includes("/instance/create_by_pod"))).toHaveLength(1);
  });
});
