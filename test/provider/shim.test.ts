import { providerTexts } from "../support/providers";
import { reportFigure } from "../support/figures";

// Inside this repository the package is reached through a symlink, so this is the fallback form; the form an
// installed package stores is tested in installed.test.ts.
describe("the serialized provider stored in state through a linked package", () => {
  let texts: Awaited<ReturnType<typeof providerTexts>>;
  beforeAll(async () => {
    process.env.GPUCLOUD_API_KEY = "sk-live-must-not-leak";
    try {
      texts = await providerTexts();
    } finally {
      delete process.env.GPUCLOUD_API_KEY;
    }
  });

  it("is a function shim that requires the implementation by the package's name at call time", () => {
    for (const [kind, text] of Object.entries(texts)) {
      reportFigure(
        "serialized provider, linked package",
        `${kind}: ${Buffer.byteLength(text)} bytes per copy`,
      );
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2500);
      expect(text).toContain('require("pulumi-gpucloud/dynamic").providers[kind]');
      expect(text).toContain(`kind: "${kind}"`);
    }
  });

  it("holds no API key and no implementation code", () => {
    for (const text of Object.values(texts)) {
      expect(text).not.toContain("sk-live-must-not-leak");
      for (const leak of [
        "apiKey",
        "GPUCLOUD",
        "zod",
        "undici",
        "GpuCloudClient",
        "checkInputs",
        "setIdleClose",
        "Symbol",
        "#",
      ]) {
        expect(text).not.toContain(leak);
      }
    }
  });

  it("differs between resources only in the kind it names", () => {
    const normalise = (text: string) => text.replace(/kind: "\w+"/, 'kind: "K"');
    expect(normalise(texts.IdleClosePolicy)).toBe(normalise(texts.Instance));
    expect(normalise(texts.PersonalImage)).toBe(normalise(texts.Instance));
  });
});
