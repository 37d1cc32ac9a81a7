/**
 * The provider's configuration as the engine hands it to the native plugin: CheckConfig refuses what is
 * missing or malformed (naming both ways to set it), Configure refuses a missing key before any resource
 * call, and DiffConfig never replaces the provider.
 */
import { status } from "@grpc/grpc-js";
import { CallError, PluginProcess, secret, UNKNOWN, withoutGpucloudEnv } from "./plugin";

const URL = "http://127.0.0.1:8787";

describe("the native plugin's configuration", () => {
  let plugin: PluginProcess;
  beforeAll(async () => {
    plugin = await PluginProcess.start();
  });
  afterAll(() => plugin?.stop());

  it("refuses a missing key in CheckConfig, naming the stack setting and the environment variable", async () => {
    const { failures } = await plugin.client.checkConfig({ baseUrl: URL });
    expect(failures).toEqual([
      {
        property: "apiKey",
        reason:
          "The GPU cloud API key is not set. Set it with `pulumi config set --secret gpucloud:apiKey <key>` " +
          "or the environment variable GPUCLOUD_API_KEY.",
      },
    ]);
  });

  it("names each malformed setting with its rule, and a setting that does not exist", async () => {
    const { failures } = await plugin.client.checkConfig({
      apiKey: secret("k-123456"),
      baseUrl: `${URL}/api/open/v2`,
      pollIntervalMs: "soon",
      apikey: "typo",
    });
    expect(failures).toEqual([
      {
        property: "apikey",
        reason: expect.stringMatching(
          /^apikey is not a setting of the gpucloud provider \(settings: apiKey, baseUrl,/,
        ),
      },
      { property: "baseUrl", reason: expect.stringContaining("already ends with /api/open/v2") },
      {
        property: "pollIntervalMs",
        reason: expect.stringMatching(
          /"soon" is invalid: it must be a positive integer of milliseconds.*GPUCLOUD_POLL_INTERVAL_MS/,
        ),
      },
    ]);
  });

  it("refuses a key holding a character a request cannot carry, in CheckConfig and Configure, never showing it", async () => {
    const key = "k-pasted-4e1d\u200b";
    const rule =
      "it must contain only printable ASCII characters without spaces, but character 14 is U+200B, which is not ASCII (often a stray character from a paste)";
    const { failures } = await plugin.client.checkConfig({ apiKey: secret(key), baseUrl: URL });
    expect(failures).toEqual([
      {
        property: "apiKey",
        reason: `The GPU cloud API key is invalid: ${rule}. Fix \`gpucloud:apiKey\` in the stack config or the environment variable GPUCLOUD_API_KEY.`,
      },
    ]);
    const refused = await plugin.client.configure({ apiKey: key, baseUrl: URL }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CallError);
    expect(refused).toMatchObject({ code: status.FAILED_PRECONDITION });
    expect((refused as Error).message).toContain(`${rule}. Fix \`gpucloud:apiKey\``);
    expect(plugin.client.received.join("\n")).not.toContain("k-pasted-4e1d");
    expect(plugin.stdout + plugin.stderr).not.toContain("k-pasted-4e1d");
  });

  it("takes numbers from an explicit provider as well as text, and lets a preview's unknowns through", async () => {
    const checked = await plugin.client.checkConfig({ apiKey: UNKNOWN, baseUrl: URL, pollIntervalMs: 250 });
    expect(checked).toEqual({
      inputs: { apiKey: secret(UNKNOWN), baseUrl: URL, pollIntervalMs: 250 },
      failures: [],
    });
  });

  it("refuses Configure without a key, before any resource call, naming both ways to set it", async () => {
    const refused = await plugin.client.configure({ baseUrl: URL }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CallError);
    expect(refused).toMatchObject({ code: status.FAILED_PRECONDITION });
    expect((refused as Error).message).toMatch(/gpucloud:apiKey.*GPUCLOUD_API_KEY/);
  });

  it("configures from the engine's older `variables` field when `args` is absent", async () => {
    await expect(
      plugin.client.configure({ apiKey: "k-123456", baseUrl: URL }, { variablesOnly: true }),
    ).resolves.toMatchObject({ acceptsecrets: true });
  });

  it("reports a changed setting as an update that never replaces the provider", async () => {
    const olds = { apiKey: secret("k-123456"), baseUrl: URL, version: "0.1.0" };
    expect(await plugin.client.diffConfig(olds, olds)).toMatchObject({ changes: "none", diffs: [] });
    const moved = await plugin.client.diffConfig(olds, {
      ...olds,
      baseUrl: "http://127.0.0.1:9999",
      version: "0.2.0",
    });
    expect(moved).toMatchObject({
      changes: "some",
      diffs: ["baseUrl"],
      replaces: [],
      detailedDiff: { baseUrl: { kind: "UPDATE", inputDiff: true } },
    });
  });
});

describe("the native plugin with the key in its environment", () => {
  let plugin: PluginProcess;
  beforeAll(async () => {
    plugin = await PluginProcess.start({ env: withoutGpucloudEnv({ GPUCLOUD_API_KEY: "env-key-5d2a71" }) });
  });
  afterAll(() => plugin?.stop());

  it("accepts config without a key and never copies the environment's key into the inputs", async () => {
    const checked = await plugin.client.checkConfig({ baseUrl: URL });
    expect(checked).toEqual({ inputs: { baseUrl: URL }, failures: [] });
    await expect(plugin.client.configure(checked.inputs)).resolves.toMatchObject({ acceptsecrets: true });
    expect(plugin.client.received.join("\n")).not.toContain("env-key-5d2a71");
  });
});
