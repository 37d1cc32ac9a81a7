/**
 * The provider's walk of /instance/list (provider/resources/instance/reads.ts): where it ends, and when
 * its pages fit together (consistent) or its first page held the whole list (atomic), which the reads,
 * the destroy's wait and the recovery of lost creates rely on. Against the emulator, its total counting
 * a hidden instance or not, and against proxies in front of it that serve pages their own way.
 */
import { GpuCloudClient, UnendingListError } from "pulumi-gpucloud/sdk";
import { walkList } from "../../provider/resources/instance/reads";
import { DEMO_KEY, DEMO_USER, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { proxyTo, type ForeignServer } from "../sdk/foreign-server";

const PAGE = 10;

describe("the walk of the instance list", () => {
  let t: TestEmulator;
  const clients: GpuCloudClient[] = [];
  const proxies: ForeignServer[] = [];
  beforeAll(async () => {
    t = await startTestEmulator({ balance: "1000000" });
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  const clientOf = (baseUrl: string) => {
    const client = new GpuCloudClient({ baseUrl, apiKey: DEMO_KEY });
    clients.push(client);
    return client;
  };
  const make = async (n: number) => {
    const spec = {
      pod_uuid: (await pod(t, "ComfyUI")).uuid,
      gpu_uuid: await gpuUuid(t, "4090D"),
      gpu_nums: 1,
    };
    for (let i = 0; i < n; i++) t.running.emulator.instances.createByPod(DEMO_USER, spec);
  };
  /** What a walk through `baseUrl` found, in the terms the reads rely on. */
  const walked = async (baseUrl: string) => {
    const walk = await walkList(clientOf(baseUrl), PAGE);
    return { size: walk.instances.size, pages: walk.pages, consistent: walk.consistent, atomic: walk.atomic };
  };
  /** A proxy in front of the emulator that changes each list answer's `data` with `edit`. */
  const rewriting = async (edit: (data: { total: number; instance_list: unknown[] }) => void) => {
    const proxy = await proxyTo(t.url, (_req, res, forwarded) => {
      const envelope = JSON.parse(forwarded.body.toString());
      edit(envelope.data);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(envelope));
      return true;
    });
    proxies.push(proxy);
    return proxy.url;
  };
  const hidden = () =>
    t.admin("POST", "/faults", { path: "/instance/list", kind: "total_counts_hidden", probability: 1 });

  it("ends on the short page that reaches the total: one page, consistent and atomic", async () => {
    await make(7);
    expect(await walked(t.url)).toEqual({ size: 7, pages: 1, consistent: true, atomic: true });
  });

  it("asks one empty page more when the total counts a hidden instance, and still reads the list as whole", async () => {
    await make(7);
    await hidden();
    expect(await walked(t.url)).toEqual({ size: 7, pages: 2, consistent: true, atomic: true });
  });

  it("walks several pages under a hidden count: consistent, not atomic", async () => {
    await make(25);
    await hidden();
    expect(await walked(t.url)).toEqual({ size: 25, pages: 4, consistent: true, atomic: false });
  });

  it("does not end on a full page whose total says the list is done: a total that lags loses nothing", async () => {
    await make(25);
    const lagging = await rewriting((data) => (data.total = PAGE));
    expect((await walked(lagging)).size).toBe(25);
  });

  it("goes on in the server's page size when it serves fewer than asked, and misses nothing", async () => {
    await make(25);
    const capped = await rewriting((data) => (data.instance_list = data.instance_list.slice(0, PAGE / 2)));
    expect(await walked(capped)).toEqual({ size: 25, pages: 6, consistent: true, atomic: false });
  });

  it("reads a list that changed between its pages as inconsistent", async () => {
    await make(25);
    let answered = 0;
    const changing = await rewriting((data) => (data.total += answered++));
    expect(await walked(changing)).toMatchObject({ size: 25, consistent: false });
  });

  it("fails at its page bound on a server that answers every page full, rather than take them for the list", async () => {
    await make(PAGE);
    // Every page asked for is answered with the first: a service that ignores `page`.
    let first: Buffer | undefined;
    const proxy = await proxyTo(t.url, (_req, res, forwarded) => {
      first ??= forwarded.body;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(first);
      return true;
    });
    proxies.push(proxy);
    const ignoring = clientOf(proxy.url);
    const err = await walkList(ignoring, PAGE, 3).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnendingListError);
    expect((err as Error).message).toContain(
      "Could not list instances: the list did not end within 3 pages of 10 (GET /instance/list)",
    );
  });
});
