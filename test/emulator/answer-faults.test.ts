/**
 * The faults that carry a call out and then change its answer, as a proxy, a gateway or the live service
 * has been seen to: optional fields sent as null, a gzip body with and without Content-Encoding, a
 * gateway's HTML page with HTTP 200, JSON cut off half way, and a list total that counts a hidden item.
 * Answers are read raw (undici's request neither decompresses nor parses), as a client meets them.
 */
import { gunzipSync } from "node:zlib";
import { request } from "undici";
import {
  createInstance,
  DEMO_KEY,
  gpuUuid,
  HTTP_ERROR_STATUS,
  pod,
  startTestEmulator,
  type TestEmulator,
} from "./helpers";

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

describe("emulator answer faults", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(HTTP_ERROR_STATUS);
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  const arm = (path: string, kind: string, extra: Record<string, unknown> = {}) =>
    t.admin("POST", "/faults", { path, kind, ...extra });

  const raw = async (method: "GET" | "POST", path: string, body?: unknown): Promise<RawAnswer> => {
    const res = await request(`${t.apiBase}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${DEMO_KEY}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
  };

  const createBody = async () => ({
    pod_uuid: (await pod(t, "ComfyUI")).uuid,
    gpu_uuid: await gpuUuid(t, "4090D"),
    gpu_nums: 1,
  });
  const listed = async () => (await t.api("GET", "/instance/list")).body.data;

  it("nulls_after_commit makes the instance, then answers with every optional field of its record null", async () => {
    await arm("/instance/create_by_pod", "nulls_after_commit");
    const answer = await raw("POST", "/instance/create_by_pod", await createBody());
    const record = JSON.parse(answer.bytes.toString()).data;
    expect(answer.status).toBe(200);
    expect(record).toMatchObject({
      title: null,
      start_time: null,
      shutdown_regular: null,
      charging_type: null,
      image_name: null,
      image_tag: null,
      gpu_name: null,
      save_image_status: null,
    });
    expect(record).toMatchObject({ status: 1, gpu_nums: 1, image_uuid: expect.any(String) });
    expect((await listed()).instance_list.map((i: { instance_uuid: string }) => i.instance_uuid)).toEqual([
      record.instance_uuid,
    ]);
  });

  it("nulls_after_commit on a list nulls each listed record's optional fields, the list's own fields kept", async () => {
    await createInstance(t);
    await createInstance(t);
    await arm("/instance/list", "nulls_after_commit");
    const data = JSON.parse((await raw("GET", "/instance/list")).bytes.toString()).data;
    expect(data.total).toBe(2);
    for (const instance of data.instance_list) {
      expect(instance).toMatchObject({
        title: null,
        server_url: null,
        server_map: null,
        shutdown_regular: null,
      });
      expect(typeof instance.instance_uuid).toBe("string");
    }
    expect((await listed()).instance_list[0].server_url).toEqual(expect.any(Array));
  });

  it("nulls_after_commit on the pod list nulls a pod's remark, tags and price, never its title or uuid", async () => {
    await arm("/pod/list", "nulls_after_commit");
    const pods = JSON.parse((await raw("GET", "/pod/list")).bytes.toString()).data.pod_list;
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods) {
      expect(p).toMatchObject({ remark: null, pod_tag: null, price: null });
      expect(typeof p.title).toBe("string");
      expect(typeof p.uuid).toBe("string");
    }
  });

  it("gzip_after_commit makes the instance, then answers gzip-compressed with Content-Encoding: gzip", async () => {
    await arm("/instance/create_by_pod", "gzip_after_commit");
    const answer = await raw("POST", "/instance/create_by_pod", await createBody());
    expect(answer.headers["content-encoding"]).toBe("gzip");
    expect(Number(answer.headers["content-length"])).toBe(answer.bytes.length);
    const envelope = JSON.parse(gunzipSync(answer.bytes).toString());
    expect(envelope).toMatchObject({ code: 0, data: { status: 1 } });
    expect((await listed()).total).toBe(1);
  });

  it("unlabelled_gzip_after_commit answers the same gzip bytes without saying so", async () => {
    await arm("/instance/create_by_pod", "unlabelled_gzip_after_commit");
    const answer = await raw("POST", "/instance/create_by_pod", await createBody());
    expect(answer.headers["content-encoding"]).toBeUndefined();
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect([...answer.bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(JSON.parse(gunzipSync(answer.bytes).toString())).toMatchObject({ code: 0 });
    expect((await listed()).total).toBe(1);
  });

  it("html_after_commit makes the instance, then answers HTTP 200 with a gateway's HTML page", async () => {
    await arm("/instance/create_by_pod", "html_after_commit");
    const answer = await raw("POST", "/instance/create_by_pod", await createBody());
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^text\/html/);
    expect(answer.bytes.toString()).toContain("<title>502 Bad Gateway</title>");
    expect((await listed()).total).toBe(1);
  });

  it("html_after_commit turns even a refusal into HTTP 200 HTML", async () => {
    await arm("/instance/destroy", "html_after_commit");
    const answer = await raw("POST", "/instance/destroy", { instance_uuid: "no-such-instance" });
    expect(answer.status).toBe(200);
    expect(answer.bytes.toString()).toMatch(/^<!doctype html>/);
  });

  it("truncated_after_commit makes the instance, then answers the first half of its JSON, Content-Length matching", async () => {
    await arm("/instance/create_by_pod", "truncated_after_commit");
    const answer = await raw("POST", "/instance/create_by_pod", await createBody());
    const text = answer.bytes.toString();
    expect(answer.status).toBe(200);
    expect(Number(answer.headers["content-length"])).toBe(answer.bytes.length);
    expect(text).toMatch(/^\{"code":0/);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    const [made] = (await listed()).instance_list;
    expect(text).toContain(made.instance_uuid.slice(0, 4));
  });

  it("total_counts_hidden makes a list's total count one item more than its pages hold, on every page", async () => {
    for (let i = 0; i < 3; i++) await createInstance(t);
    await arm("/instance/list", "total_counts_hidden", { probability: 1 });
    const page = async (n: number) =>
      (await t.api("GET", "/instance/list", { query: { page: n, page_size: 2 } })).body.data;
    const [first, second, third] = [await page(1), await page(2), await page(3)];
    expect([first.total, second.total, third.total]).toEqual([4, 4, 4]);
    expect([first.instance_list.length, second.instance_list.length, third.instance_list.length]).toEqual([
      2, 1, 0,
    ]);
    await t.admin("DELETE", "/faults");
    expect((await page(1)).total).toBe(3);
  });

  it("lists the new kinds among those it accepts, and refuses ms on them", async () => {
    const refused = await arm("/instance/list", "html_after_commit", { ms: 5 });
    expect(refused.status).toBe(400);
    expect(refused.body.msg).toBe("ms: only applies to delay and late_commit");
    const unknown = await arm("/instance/list", "gzip");
    expect(unknown.body.msg).toContain("truncated_after_commit, total_counts_hidden");
  });
});
