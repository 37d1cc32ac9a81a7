/**
 * The settings table (docs/design/contracts.md#configuration): stack config, then the environment, values as
 * text parsed and checked, a bad value named with both ways to set it, and the request timeout reaching the
 * client.
 */
import { getBalance } from "../../provider/datasources";
import { ConfigurationError, resolveConnection, resolveProviderSettings } from "../../provider/settings";
import { secret } from "../harness";
import { DEMO_KEY, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { gpucloudHarness } from "../support/providers";

const base = { "gpucloud:apiKey": "k", "gpucloud:baseUrl": "http://127.0.0.1:8787/" };
const lookup = (config: Record<string, string>) => (key: string) => config[key];

describe("the settings", () => {
  it("default the poll interval to 5000 ms and the request timeout to 30000 ms", () => {
    expect(resolveProviderSettings(lookup(base), {})).toEqual({
      apiKey: "k",
      baseUrl: "http://127.0.0.1:8787",
      pollIntervalMs: 5000,
      requestTimeoutMs: 30_000,
      sharedAccount: true,
    });
  });

  it("read sharedAccount as true or false, and refuse anything else naming both ways to set it", () => {
    expect(resolveProviderSettings(lookup({ ...base, "gpucloud:sharedAccount": "false" }), {})).toMatchObject(
      {
        sharedAccount: false,
      },
    );
    expect(resolveProviderSettings(lookup(base), { GPUCLOUD_SHARED_ACCOUNT: "false" }).sharedAccount).toBe(
      false,
    );
    expect(() => resolveProviderSettings(lookup(base), { GPUCLOUD_SHARED_ACCOUNT: "no" })).toThrow(
      'The GPU cloud shared-account setting "no" is invalid: it must be true or false. ' +
        "Fix `gpucloud:sharedAccount` in the stack config or the environment variable GPUCLOUD_SHARED_ACCOUNT.",
    );
  });

  it("parse numbers from stack config text, and from the environment when config has none", () => {
    expect(
      resolveProviderSettings(lookup({ ...base, "gpucloud:requestTimeoutMs": " 5000 " }), {
        GPUCLOUD_POLL_INTERVAL_MS: "250",
        GPUCLOUD_REQUEST_TIMEOUT_MS: "9",
      }),
    ).toMatchObject({ pollIntervalMs: 250, requestTimeoutMs: 5000 });
  });

  it.each(["abc", "0", "-5", "1.5", "1e3", "2147483648"])(
    "refuse a request timeout of %p, naming both ways to set it",
    (value) => {
      const resolve = () => resolveProviderSettings(lookup(base), { GPUCLOUD_REQUEST_TIMEOUT_MS: value });
      expect(resolve).toThrow(ConfigurationError);
      expect(resolve).toThrow(
        `The GPU cloud request timeout "${value}" is invalid: it must be a positive integer of milliseconds, at most 2147483647. ` +
          "Fix `gpucloud:requestTimeoutMs` in the stack config or the environment variable GPUCLOUD_REQUEST_TIMEOUT_MS.",
      );
    },
  );

  it("refuse a base URL holding a character a request would drop or encode, and trim the edges as before", () => {
    expect(() =>
      resolveProviderSettings(lookup({ ...base, "gpucloud:baseUrl": "http://127.0.0.1:8787/\u200b" }), {}),
    ).toThrow(
      /base URL ".*" is invalid: it must contain only printable ASCII characters without spaces, but character 23 is U\+200B, which is not ASCII .*Fix `gpucloud:baseUrl`/,
    );
    expect(
      resolveProviderSettings(lookup({ ...base, "gpucloud:baseUrl": " http://127.0.0.1:8787/\n" }), {})
        .baseUrl,
    ).toBe("http://127.0.0.1:8787");
  });

  it("hold the data sources to the request timeout too, but not to the poll interval they never use", () => {
    const config = { ...base, "gpucloud:pollIntervalMs": "never" };
    expect(resolveConnection(lookup(config), {}, true, {}).requestTimeoutMs).toBe(30_000);
    expect(() =>
      resolveConnection(lookup({ ...base, "gpucloud:requestTimeoutMs": "x" }), {}, true, {}),
    ).toThrow(/gpucloud:requestTimeoutMs.*GPUCLOUD_REQUEST_TIMEOUT_MS/);
  });
});

describe("the request timeout against a cloud that answers late", () => {
  let emu: TestEmulator;
  beforeAll(async () => (emu = await startTestEmulator()));
  afterAll(() => emu.close());
  const late = (path: string) => emu.admin("POST", "/faults", { path, kind: "delay", ms: 1000, count: 20 });

  it("ends a resource's request after gpucloud:requestTimeoutMs", async () => {
    await late("/instance/list");
    const h = await gpucloudHarness({
      config: {
        "gpucloud:apiKey": secret(DEMO_KEY),
        "gpucloud:baseUrl": emu.url,
        "gpucloud:requestTimeoutMs": "300",
      },
    });
    try {
      const read = h.read("Instance", { id: "ins-1", inputs: {}, outputs: {} });
      await expect(read).rejects.toThrow(/no answer within 300 ms/);
    } finally {
      await h.stop();
    }
  });

  it("ends a data source's request after GPUCLOUD_REQUEST_TIMEOUT_MS", async () => {
    await late("/balance/info");
    process.env.GPUCLOUD_REQUEST_TIMEOUT_MS = "300";
    try {
      await expect(getBalance({ baseUrl: emu.url, apiKey: DEMO_KEY })).rejects.toThrow(
        /no answer within 300 ms/,
      );
    } finally {
      delete process.env.GPUCLOUD_REQUEST_TIMEOUT_MS;
    }
  });
});
