/**
 * A create whose answer is too large to read: the cloud made the instance and answered with a body
 * without end, which the client stops reading at its cap. The provider must take that as a create of
 * unknown outcome and reconcile it against the instance list, never as a plain failure that would
 * forget a paid instance, nor send the create again.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DEFAULT_MAX_RESPONSE_BYTES, GpuCloudClient, type RequestEvent } from "pulumi-gpucloud/sdk";
import { withoutGpucloudEnv, type Harness } from "../harness";
import { gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { advancing } from "../support/clock";
import { gpucloudHarness, providerConfig } from "../support/providers";
import { endlessBody, proxyTo, type ForeignServer } from "../sdk/foreign-server";

const KEY = "oversized-key";
const CREATE = "/instance/create_by_pod";
/** The size the endless answer announces: the 900 MB body that once failed as a lost connection. */
const ANNOUNCED = 900 * 1024 * 1024;

jest.setTimeout(120_000);

describe("a create answered with a body too large to read", () => {
  let emu: TestEmulator;
  let proxy: ForeignServer;
  let h: Harness;
  let api: GpuCloudClient;
  let requestLog: string;
  let written: Promise<number> | undefined;

  beforeAll(async () => {
    emu = await startTestEmulator({ apiKeys: [KEY] });
    // The emulator makes the instance; the provider gets an endless body in place of its answer.
    proxy = await proxyTo(emu.url, (req, res) => {
      if (!req.url?.includes(CREATE)) return false;
      written = endlessBody(res, { announce: ANNOUNCED });
      return true;
    });
    requestLog = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-oversized-")), "requests.jsonl");
    h = await gpucloudHarness({
      config: providerConfig(proxy.url, KEY, { "gpucloud:requestTimeoutMs": "500" }),
      env: { ...withoutGpucloudEnv(), GPUCLOUD_REQUEST_LOG: requestLog },
    });
    api = new GpuCloudClient({ baseUrl: emu.url, apiKey: KEY });
  });
  afterAll(async () => {
    await api?.close();
    await h?.stop();
    await proxy?.close();
    await emu?.close();
  });

  it("adopts the instance the create made, sent once, and leaves exactly that one", async () => {
    const spec = {
      podUuid: (await pod(emu, "ComfyUI")).uuid,
      gpuUuid: await gpuUuid(emu, "4090D", KEY),
      gpuNums: 1,
    };
    const inputs = await h.checked("Instance", { ...spec, title: "too large" });
    const state = await advancing(emu, h.create("Instance", inputs));

    const listed = (await api.instances.list()).instance_list;
    expect(listed.map((i) => [i.instance_uuid, i.title])).toEqual([[state.id, "too large"]]);
    expect(state.outputs).toMatchObject({ title: "too large", status: 2, pendingCreate: null });
    const creates = ((await emu.admin("GET", "/requests")).body.requests as { path: string }[]).filter(
      (r) => r.path === CREATE,
    );
    expect(creates).toHaveLength(1);

    // It was the cap that ended the answer, at once: not the request timeout, not a lost connection.
    const attempts = readFileSync(requestLog, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as RequestEvent)
      .filter((e) => e.path === CREATE);
    expect(attempts).toHaveLength(1);
    expect(attempts[0].status).toBe(200);
    expect(attempts[0].error).toContain(
      `announced as ${ANNOUNCED} bytes (900 MiB)) is larger than ${DEFAULT_MAX_RESPONSE_BYTES} bytes`,
    );
    expect(await written).toBeLessThan(32 * 1024 * 1024);
  });
});
