/**
 * The SDK's error classes against the real emulator, in both of its error modes: `http` answers
 * business failures with 4xx, `envelope` with HTTP 200 and the envelope code (as clients of the live
 * service expect). The class a caller sees must not depend on the mode; what stays an HTTP status
 * (401, 429, 5xx, unknown paths) stays one in both.
 */
import {
  AuthenticationError,
  BusinessError,
  collect,
  NotFoundError,
  OutcomeUnknownError,
  ServerError,
  type GpuCloudClient,
} from "pulumi-gpucloud/sdk";
import { countCalls, ERROR_MODES, failure, KEY, OTHER_KEY, startCloud, USER, type Cloud } from "./harness";

describe.each(ERROR_MODES)("business failures with %s statuses", (mode) => {
  let cloud: Cloud;
  let client: GpuCloudClient;
  let spec: { pod_uuid: string; gpu_uuid: string; gpu_nums: number };
  /** The HTTP status a business failure arrives with in this mode. */
  const businessStatus = (httpStatus: number): number => (mode === "envelope" ? 200 : httpStatus);

  beforeAll(async () => {
    cloud = await startCloud({ errorStatus: mode });
    client = cloud.client();
    spec = {
      pod_uuid: (await collect(client.catalogue.podsAll()))[0].uuid,
      gpu_uuid: (await client.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "4090D")!.gpu_uuid,
      gpu_nums: 1,
    };
  });
  afterAll(() => cloud.close());
  beforeEach(() => cloud.reset());

  it("a parameter the API refuses is a BusinessError with code 1, never resent", async () => {
    const err = await failure(client.instances.createByPod({ ...spec, gpu_uuid: "gpu-nope" }));
    expect(err).toBeInstanceOf(BusinessError);
    expect(err).toMatchObject({ status: businessStatus(400), code: 1 });
    expect(countCalls(await cloud.requests(), "/instance/create_by_pod")).toBe(1);
  });

  it("a missing resource is a NotFoundError, whatever code the area uses", async () => {
    const info = await failure(client.instances.info("i-missing"));
    expect(info).toBeInstanceOf(NotFoundError);
    expect(info).toMatchObject({ status: businessStatus(404), code: -1 });
    const rename = await failure(client.instances.updateTitle("i-missing", "x"));
    expect(rename).toBeInstanceOf(NotFoundError);
    expect(rename).toMatchObject({ status: businessStatus(404), code: 1 });
    await expect(client.workflows.runInfo("run-missing")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.assets.get("asset_missing")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("another user's instance looks missing, and deleting a missing one counts as done", async () => {
    const { instance_uuid } = await client.instances.createByPod(spec);
    const other = cloud.client({ apiKey: OTHER_KEY });
    await expect(other.instances.info(instance_uuid)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.instances.destroy("i-missing")).resolves.toBeUndefined();
    await expect(client.images.delete("img-missing")).resolves.toBeUndefined();
  });

  it("an operation in the wrong state is a BusinessError, and an unsafe one is not taken for an unknown outcome", async () => {
    const { instance_uuid } = await client.instances.createByPod(spec);
    const err = await failure(client.instances.startup(instance_uuid));
    expect(err).toBeInstanceOf(BusinessError);
    expect(err).not.toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ status: businessStatus(400), code: -1 });
  });

  it("an insufficient balance is a BusinessError that says so", async () => {
    await cloud.setBalance(USER, 0);
    const err = await failure(client.instances.createByPod(spec));
    expect(err).toBeInstanceOf(BusinessError);
    expect(err.status).toBe(businessStatus(400));
    expect(err.message).toMatch(/insufficient balance/);
  });

  it("an unknown key is still HTTP 401 and an AuthenticationError, sent once", async () => {
    const err = await failure(cloud.client({ apiKey: `${KEY}-wrong` }).account.balance());
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.status).toBe(401);
    expect(countCalls(await cloud.requests(), "/balance/info", "GET")).toBe(1);
  });

  it("a service failure is still HTTP 5xx: a ServerError after the retries", async () => {
    await cloud.fault("/balance/info", "http_500", 4);
    const err = await failure(cloud.client({ maxRetries: 1 }).account.balance());
    expect(err).toBeInstanceOf(ServerError);
    expect(err.status).toBe(500);
  });

  it("a rate limit is still HTTP 429 with Retry-After, waited out", async () => {
    await cloud.fault("/gpu/list", "http_429", 1);
    expect((await client.catalogue.gpus()).total).toBeGreaterThan(0);
    expect(cloud.events.filter((e) => e.path === "/gpu/list").map((e) => e.status)).toEqual([429, 200]);
  });
});
