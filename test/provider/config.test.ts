import { secret, type Harness } from "../harness";
import {
  callsByEndpoint,
  DEMO_KEY,
  gpuUuid,
  pod,
  startTestEmulator,
  type TestEmulator,
} from "../emulator/helpers";
import { gpucloudHarness } from "../support/providers";

describe("provider configuration", () => {
  let emu: TestEmulator;
  let spec: Record<string, unknown>;
  const servers: Harness[] = [];
  const start = async (options: Parameters<typeof gpucloudHarness>[0]) => {
    const h = await gpucloudHarness(options);
    servers.push(h);
    return h;
  };
  const onlyPath = { PATH: process.env.PATH };

  beforeAll(async () => {
    emu = await startTestEmulator();
    spec = { podUuid: (await pod(emu, "ComfyUI")).uuid, gpuUuid: await gpuUuid(emu, "4090D"), gpuNums: 1 };
  });
  afterAll(async () => {
    await Promise.all(servers.map((h) => h.stop()));
    await emu.close();
  });

  it("names both ways to set a missing API key", async () => {
    const h = await start({ config: { "gpucloud:baseUrl": emu.url }, env: onlyPath });
    await expect(h.create("Instance", await h.checked("Instance", spec))).rejects.toThrow(
      "The GPU cloud API key is not set. Set it with `pulumi config set --secret gpucloud:apiKey <key>` or the environment variable GPUCLOUD_API_KEY.",
    );
  });

  it("names both ways to set a missing base URL", async () => {
    const h = await start({ config: { "gpucloud:apiKey": secret(DEMO_KEY) }, env: onlyPath });
    await expect(h.create("Instance", await h.checked("Instance", spec))).rejects.toThrow(
      /gpucloud:baseUrl.*GPUCLOUD_BASE_URL/,
    );
  });

  it("refuses a malformed setting at check, so a preview fails as up would, before any API call", async () => {
    await emu.admin("DELETE", "/requests");
    const h = await start({ config: { "gpucloud:pollIntervalMs": "fast" }, env: onlyPath });
    const refused = await h.check("Instance", spec).catch((err: Error) => err.message);
    expect(refused).toContain('The GPU cloud poll interval "fast" is invalid');
    expect(refused).toContain("gpucloud:pollIntervalMs");
    const fromEnv = await start({ env: { ...onlyPath, GPUCLOUD_REQUEST_TIMEOUT_MS: "-5" } });
    await expect(fromEnv.check("Instance", spec)).rejects.toThrow(/GPUCLOUD_REQUEST_TIMEOUT_MS/);
    // A missing key or URL is left to the first call that needs them: a preview needs neither.
    const unset = await start({ env: onlyPath });
    expect((await unset.check("Instance", spec)).failures).toEqual([]);
    expect(await callsByEndpoint(emu)).toEqual({});
  });

  it("refuses a key holding a character a request cannot carry at check, naming the setting, never the key", async () => {
    await emu.admin("DELETE", "/requests");
    const pasted = `${DEMO_KEY}\u200b`;
    const h = await start({
      config: { "gpucloud:apiKey": secret(pasted), "gpucloud:baseUrl": emu.url },
      env: onlyPath,
    });
    const refused = await h.check("Instance", spec).catch((err: Error) => err.message);
    expect(refused).toContain(
      `The GPU cloud API key is invalid: it must contain only printable ASCII characters without spaces, but character ${DEMO_KEY.length + 1} is U+200B, which is not ASCII (often a stray character from a paste). Fix \`gpucloud:apiKey\` in the stack config or the environment variable GPUCLOUD_API_KEY.`,
    );
    const fromEnv = await start({
      env: { ...onlyPath, GPUCLOUD_API_KEY: "demo\n-key", GPUCLOUD_BASE_URL: emu.url },
    });
    await expect(fromEnv.check("Instance", spec)).rejects.toThrow(
      /API key is invalid: .*character 5 is a control character \(U\+000A\).*GPUCLOUD_API_KEY/,
    );
    expect(await callsByEndpoint(emu)).toEqual({});
    expect(`${refused}${h.stderr}${fromEnv.stderr}`).not.toContain(DEMO_KEY);
    expect(`${h.stderr}${fromEnv.stderr}`).not.toContain("demo\n-key");
  });

  it("falls back to the environment, even when no Configure call arrives", async () => {
    const h = await start({ env: { ...onlyPath, GPUCLOUD_API_KEY: DEMO_KEY, GPUCLOUD_BASE_URL: emu.url } });
    const outcome = await h
      .create(
        "IdleClosePolicy",
        await h.checked("IdleClosePolicy", { instanceUuid: "nope", idlePeriodMinutes: 10 }),
      )
      .catch((e: Error) => e);
    // Reaching the cloud at all proves the settings came from the environment: the instance is unknown there.
    expect(String(outcome)).toMatch(/not found/i);
  });

  it("never shows the API key in errors or the server's log", async () => {
    const key = "sk-wrong-0123456789";
    const h = await start({
      config: { "gpucloud:apiKey": secret(key), "gpucloud:baseUrl": emu.url },
      env: onlyPath,
    });
    const error = await h.create("Instance", await h.checked("Instance", spec)).catch((e: Error) => e);
    expect(String(error)).toMatch(/authentication|401/i);
    expect(String(error)).not.toContain(key);
    expect(h.stderr).not.toContain(key);
  });
});
