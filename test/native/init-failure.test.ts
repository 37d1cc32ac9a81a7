/**
 * A create or update that leaves the resource existing but unfinished (a definition's ResourceInitError)
 * reaches the engine as ErrorResourceInitFailed: the id, the outputs (secret ones wrapped) and the inputs
 * in the status details, the reasons beside them, so the engine keeps the resource in state. The plugin
 * runs in this process here, serving a resource that never finishes, defined with the package's framework.
 */
import { status } from "@grpc/grpc-js";
import { z } from "zod";
import { defineResource, outputFields } from "../../provider/framework/define-resource";
import { ResourceInitError } from "../../provider/framework/errors";
import { serveNativeProvider, type NativeProvider } from "../../provider/native/server";
import { CallError, isSecret, PluginClient, secret, type InitFailure, type Props } from "./plugin";

const field = outputFields<{ label: string; code: string }>();

const halfDone = (inputs: Props) =>
  new ResourceInitError("the box was made but never became healthy", {
    id: "box-1",
    state: { inputs, cloud: { label: `half-made ${inputs.size}`, code: "box-secret-code" } },
    reasons: ["health check failed", "gave up after 3 tries"],
  });

const box = defineResource({
  name: "Box",
  description: "A box that never finishes.",
  id: "the box's number",
  example: [],
  inputs: z.object({
    size: z.number().describe("Its size."),
    note: z.string().optional().describe("A note."),
  }),
  outputs: {
    label: field(z.string().describe("Its label."), "label"),
    code: field.secret(z.string().describe("Its door code."), "code"),
  },
  async create(_ctx, inputs) {
    throw halfDone(inputs);
  },
  async read(_ctx, _id, inputs) {
    return { inputs, cloud: { label: "read", code: "c" } };
  },
  async update(_ctx, _id, _olds, news) {
    throw halfDone(news);
  },
  async delete() {},
  async import() {
    throw new Error("no import");
  },
});

async function initFailure(call: Promise<unknown>): Promise<InitFailure> {
  const err = await call.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CallError);
  // The code Pulumi's own provider SDKs send beside ErrorResourceInitFailed, which the engine reads first.
  expect((err as CallError).code).toBe(status.UNKNOWN);
  return (err as CallError).initFailure!;
}

describe("a resource that exists but could not finish, through the native plugin", () => {
  let provider: NativeProvider;
  let client: PluginClient;
  beforeAll(async () => {
    provider = await serveNativeProvider({ definitions: [box] });
    client = new PluginClient(provider.port);
    // Never dialled: the box lives nowhere, but every operation needs settings.
    await client.configure({ apiKey: secret("k-never-used"), baseUrl: "http://127.0.0.1:1" });
  });
  afterAll(async () => {
    client?.close();
    await provider?.close();
  });

  it("fails create with ErrorResourceInitFailed carrying its id, outputs, inputs and reasons", async () => {
    const failure = await initFailure(client.create("Box", { size: 2, note: secret("private note") }));
    expect(failure).toMatchObject({
      message: "the box was made but never became healthy",
      id: "box-1",
      inputs: { size: 2, note: secret("private note") },
      reasons: ["health check failed", "gave up after 3 tries"],
    });
    expect(failure.properties).toEqual({
      size: 2,
      note: secret("private note"),
      label: "half-made 2",
      code: secret("box-secret-code"),
    });
  });

  it("fails update the same way, with the new inputs among the outputs", async () => {
    const failure = await initFailure(
      client.update("Box", "box-1", { size: 2, label: "half-made 2" }, { size: 3 }),
    );
    expect(failure).toMatchObject({ id: "box-1", properties: { size: 3, label: "half-made 3" } });
    expect(isSecret(failure.properties.code)).toBe(true);
  });
});
