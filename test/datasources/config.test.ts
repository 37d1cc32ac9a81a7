import * as pulumi from "@pulumi/pulumi";
import { inspect } from "node:util";
import { AuthenticationError } from "pulumi-gpucloud/sdk";
import {
  ConfigurationError,
  getBalance,
  getBalanceOutput,
  getMarketImages,
  getPods,
} from "../../provider/datasources";
import { API_KEY, requests, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();
const savedEnv = { ...process.env };

beforeEach(() => {
  delete process.env.GPUCLOUD_BASE_URL;
  delete process.env.GPUCLOUD_API_KEY;
  pulumi.runtime.setAllConfig({});
});
afterEach(() => {
  process.env = { ...savedEnv };
  pulumi.runtime.setAllConfig({});
});

describe("where the connection comes from", () => {
  it("reads the base URL and key from the environment", async () => {
    process.env.GPUCLOUD_BASE_URL = emu.url;
    process.env.GPUCLOUD_API_KEY = API_KEY;
    await expect(getBalance()).resolves.toMatchObject({ currency: "CNY" });
  });

  it("reads them from Pulumi config, which wins over the environment", async () => {
    process.env.GPUCLOUD_BASE_URL = "http://127.0.0.1:1";
    process.env.GPUCLOUD_API_KEY = "stale-key";
    pulumi.runtime.setAllConfig({ "gpucloud:baseUrl": emu.url, "gpucloud:apiKey": API_KEY }, [
      "gpucloud:apiKey",
    ]);
    await expect(getBalance()).resolves.toMatchObject({ currency: "CNY" });
  });

  it("lets explicit options win over config", async () => {
    pulumi.runtime.setAllConfig({ "gpucloud:baseUrl": "http://127.0.0.1:1", "gpucloud:apiKey": "stale-key" });
    await expect(getBalance({ baseUrl: `${emu.url}/`, apiKey: API_KEY })).resolves.toMatchObject({
      currency: "CNY",
    });
  });

  it("needs only the base URL for the public pod and market image lists", async () => {
    process.env.GPUCLOUD_BASE_URL = emu.url;
    expect((await getPods()).pods.length).toBeGreaterThan(0);
    expect((await getMarketImages()).images.length).toBeGreaterThan(0);
  });
});

describe("configuration errors", () => {
  it("names both ways to set a missing base URL", async () => {
    const failure = getPods();
    await expect(failure).rejects.toBeInstanceOf(ConfigurationError);
    await expect(failure).rejects.toThrow(
      "The GPU cloud base URL is not set. Set it with `pulumi config set gpucloud:baseUrl <url>` or the environment variable GPUCLOUD_BASE_URL",
    );
  });

  it("names both ways to set a missing API key, before any request", async () => {
    process.env.GPUCLOUD_BASE_URL = emu.url;
    const failure = getBalance();
    await expect(failure).rejects.toBeInstanceOf(ConfigurationError);
    await expect(failure).rejects.toThrow(
      "The GPU cloud API key is not set. Set it with `pulumi config set --secret gpucloud:apiKey <key>` or the environment variable GPUCLOUD_API_KEY.",
    );
    expect(await requests(emu)).toHaveLength(0);
  });

  it("treats a blank setting as missing", async () => {
    process.env.GPUCLOUD_BASE_URL = emu.url;
    process.env.GPUCLOUD_API_KEY = "   ";
    await expect(getBalance()).rejects.toThrow("The GPU cloud API key is not set.");
  });

  it.each([
    ["not a url", "it is not a URL"],
    ["ftp://127.0.0.1:21", "its scheme ftp: is neither http: nor https:"],
    [
      "http://127.0.0.1:8787/api/open/v2",
      "it already ends with /api/open/v2, which the client appends; drop that suffix",
    ],
  ])("refuses the base URL %j: %s", async (url, why) => {
    await expect(getBalance({ baseUrl: url, apiKey: API_KEY })).rejects.toThrow(
      `The GPU cloud base URL "${url}" is invalid: ${why}. Fix \`gpucloud:baseUrl\` in the stack config or the environment variable GPUCLOUD_BASE_URL.`,
    );
  });

  it("surfaces a configuration error through the Output form", async () => {
    await expect(resolveOutput(getBalanceOutput())).rejects.toBeInstanceOf(ConfigurationError);
  });
});

describe("the API key stays secret", () => {
  const secretKey = "sk-live-9f8e7d6c5b4a-DO-NOT-LEAK";

  it("does not appear in an authentication failure", async () => {
    pulumi.runtime.setAllConfig({ "gpucloud:baseUrl": emu.url, "gpucloud:apiKey": secretKey }, [
      "gpucloud:apiKey",
    ]);
    const error: unknown = await getBalance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(inspect(error, { depth: 5 })).not.toContain(secretKey);
    expect(JSON.stringify(error)).not.toContain(secretKey);
  });

  it("does not appear in a configuration error", async () => {
    const error: unknown = await getBalance({ baseUrl: "nonsense", apiKey: secretKey }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(inspect(error, { depth: 5 })).not.toContain(secretKey);
  });
});
