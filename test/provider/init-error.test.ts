/**
 * A create or update that leaves the resource existing but unfinished (ResourceInitError) reaches the
 * engine as ErrorResourceInitFailed through the real dynamic-provider server: the id, the outputs and
 * the reasons in `grpc-status-details-bin`, and the provider among the outputs, so the engine can still
 * read, update and delete the resource it now keeps in state.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { assertBuilt, Harness, REPO_ROOT, secret } from "../harness";
import { initFailure } from "../support/init-failure";

/**
 * A resource whose create and update always end half way, defined with the package's own framework
 * (compiled, as the provider server loads it) and stored as a one-line provider that requires it.
 */
function flakyResource(dir: string): string {
  const dist = (file: string) => JSON.stringify(path.join(REPO_ROOT, "dist", "provider", "framework", file));
  const zod = JSON.stringify(require.resolve("zod", { paths: [REPO_ROOT] }));
  const file = path.join(dir, "flaky.js");
  fs.writeFileSync(
    file,
    `const { z } = require(${zod});
const { defineResource, outputFields } = require(${dist("define-resource.js")});
const { dynamicProvider } = require(${dist("dynamic-provider.js")});
const { ResourceInitError } = require(${dist("errors.js")});
const field = outputFields();
const halfDone = (inputs) =>
  new ResourceInitError("the box was made but never became healthy", {
    id: "box-1",
    state: { inputs, cloud: { label: "half-made " + inputs.size } },
    reasons: ["health check failed", "gave up after 3 tries"],
  });
module.exports = dynamicProvider(
  defineResource({
    name: "Box",
    description: "A box that never finishes.",
    inputs: z.object({ size: z.number().describe("Its size.") }),
    outputs: { label: field(z.string().describe("Its label."), (cloud) => cloud.label) },
    async create(_ctx, inputs) { throw halfDone(inputs); },
    async read(_ctx, _id, inputs) { return { inputs, cloud: { label: "read" } }; },
    async update(_ctx, _id, _olds, news) { throw halfDone(news); },
    async delete() {},
    async import() { throw new Error("no import"); },
  }),
);
`,
  );
  return `exports.handler = function () { return require(${JSON.stringify(file)}); };\n`;
}

describe("a resource that exists but could not finish", () => {
  let dir: string;
  let provider: string;
  let h: Harness;
  beforeAll(async () => {
    assertBuilt();
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "gpucloud-init-error-"));
    provider = flakyResource(dir);
    h = await Harness.start({
      providers: { Box: provider },
      module: "test",
      // Never dialled: the box lives nowhere, but every operation needs settings.
      config: { "gpucloud:apiKey": secret("k"), "gpucloud:baseUrl": "http://127.0.0.1:1" },
    });
  });
  afterAll(async () => {
    await h?.stop();
    await fs.promises.rm(dir, { recursive: true, force: true });
  });

  it("fails create with ErrorResourceInitFailed carrying its id, outputs and reasons", async () => {
    const failure = initFailure(await h.create("Box", { size: 2 }).catch((e: unknown) => e));
    expect(failure).toEqual({
      message: "the box was made but never became healthy",
      id: "box-1",
      properties: { size: 2, label: "half-made 2", __provider: provider },
      reasons: ["health check failed", "gave up after 3 tries"],
    });
  });

  it("fails update the same way, with the new inputs among the outputs", async () => {
    const state = { id: "box-1", inputs: { size: 2 }, outputs: { size: 2, label: "half-made 2" } };
    const failure = initFailure(await h.update("Box", state, { size: 3 }).catch((e: unknown) => e));
    expect(failure).toMatchObject({ id: "box-1", properties: { size: 3, label: "half-made 3" } });
  });
});
