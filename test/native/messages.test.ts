/**
 * What the native plugin says when a call fails: the values the engine marked secret never show (each
 * is "[secret]" wherever a resource, a data source or a setting would have quoted it), and the message
 * still names the field at fault.
 */
import { startNativeCloud, type NativeCloud } from "./cloud";
import { CallError, secret, type Props } from "./plugin";

describe("the native plugin's messages", () => {
  let c: NativeCloud;
  beforeAll(async () => {
    c = await startNativeCloud();
    await c.plugin.client.configure(c.config);
  });
  afterAll(async () => {
    await c?.stop();
  });

  async function failure(call: Promise<unknown>): Promise<string> {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CallError);
    return (err as CallError).message;
  }

  describe("never show a secret input of the call", () => {
    const base = (): Props => ({ ...c.spec, title: "t", waitForServices: false, waitTimeoutSeconds: 900 });

    it.each([
      ["podUuid", "pod-SECRET-0001"],
      ["gpuUuid", "gpu-SECRET-0002"],
      ["podTag", "tag-SECRET-0003"],
      ["adoptInstanceUuid", "ins-SECRET-0004"],
    ])("Create of an Instance with a secret %s the cloud refuses", async (field, value) => {
      const message = await failure(
        c.plugin.client.create("Instance", { ...base(), [field]: secret(value) }),
      );
      expect(message).not.toContain(value);
      expect(message).toContain("[secret]");
      expect(message).toMatch(field === "adoptInstanceUuid" ? /adoptInstanceUuid/ : /pod|GPU|tag/);
    });

    it("Create of an IdleClosePolicy on a secret instanceUuid that does not exist", async () => {
      const value = "ins-SECRET-0005";
      const message = await failure(
        c.plugin.client.create("IdleClosePolicy", {
          instanceUuid: secret(value),
          idlePeriodMinutes: 30,
          destroyOnIdle: false,
          gpuThreshold: 0,
          memoryThreshold: 0,
        }),
      );
      expect(message).not.toContain(value);
      expect(message).toMatch(/^Could not set idle-close on instance \[secret\]/);
    });

    it("Create of a PersonalImage adopting a secret image uuid", async () => {
      const value = "img-SECRET-0006";
      const message = await failure(
        c.plugin.client.create("PersonalImage", { adoptImageUuid: secret(value), waitTimeoutSeconds: 30 }),
      );
      expect(message).not.toContain(value);
      expect(message).toContain("adoptImageUuid");
    });

    it("Invoke with a secret argument: in the error and in the argument failures", async () => {
      const title = "TITLE-SECRET-0007";
      const byTitle = await failure(c.plugin.client.invoke("getPod", { title: secret(title) }));
      expect(byTitle).not.toContain(title);
      expect(byTitle).toContain('no pod is titled "[secret]"');

      const id = "WF-SECRET-0008";
      const workflow = await failure(c.plugin.client.invoke("getWorkflow", { workflowId: secret(id) }));
      expect(workflow).not.toContain(id);
      expect(workflow).toContain("workflow [secret]");

      const { failures } = await c.plugin.client.invoke("getPod", {
        title: "x",
        tag: secret({ t: "TAG-SECRET-0009" }),
      });
      expect(failures).toEqual([{ property: "tag", reason: "tag must be a string, got a secret value" }]);
    });

    it("CheckConfig and Configure with a secret baseUrl they refuse", async () => {
      const url = "https://SECRET-token-0010@example.test/api/open/v2";
      const { failures } = await c.plugin.client.checkConfig({
        apiKey: secret("k-123456"),
        baseUrl: secret(url),
      });
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ property: "baseUrl" });
      expect(failures[0]!.reason).toContain("gpucloud:baseUrl");
      expect(failures[0]!.reason).not.toContain("SECRET-token");

      const message = await failure(
        c.plugin.client.configure({ apiKey: secret("k-123456"), baseUrl: secret(url) }),
      );
      expect(message).toContain("gpucloud:baseUrl");
      expect(message).not.toContain("SECRET-token");
      // Configured again as the other tests need it.
      await c.plugin.client.configure(c.config);
    });

    it("leaves none of them in any answer or line the plugin wrote", () => {
      const everything = c.plugin.client.received.join("\n") + c.plugin.stdout + c.plugin.stderr;
      expect(everything).not.toMatch(/SECRET/);
    });
  });

  describe("state the resource cannot read, in words rather than zod's", () => {
    it("Diff and Delete of a pending create whose state has no pendingCreate", async () => {
      const id = "pending-create:1:deadbeef";
      for (const call of [
        c.plugin.client.diff("Instance", id, {}, { ...c.spec }),
        c.plugin.client.delete("Instance", id, {}),
      ]) {
        const message = await failure(call);
        expect(message).toContain(`Could not resolve the pending create ${id}`);
        expect(message).toContain("(pendingCreate is missing)");
        expect(message).not.toMatch(/Invalid input|expected object/);
      }
    });

    it("refresh of a PersonalImage whose stored inputs break the rules names each field and its rule", async () => {
      const inst = await c.advancing(
        c.plugin.client.create("Instance", { ...c.spec, waitForServices: false, waitTimeoutSeconds: 900 }),
      );
      const image = await c.advancing(c.api.images.saveFromInstance(inst.id, { pollIntervalMs: 10 }), 20);
      const stored = { adoptImageUuid: image.uuid, waitTimeoutSeconds: 900 };
      for (const [broken, rule] of [
        [{ waitTimeoutSeconds: 0 }, "waitTimeoutSeconds must be positive"],
        [{ waitTimeoutSeconds: "abc" }, "waitTimeoutSeconds must be"],
        [{ adoptImageUuid: undefined, instanceUuid: "" }, "instanceUuid must not be empty"],
      ] as const) {
        const message = await failure(
          c.plugin.client.read("PersonalImage", image.uuid, { ...stored, ...broken }),
        );
        expect(message).toContain(`Could not refresh image ${image.uuid}: the state holds inputs`);
        expect(message).toContain(rule);
        expect(message).not.toMatch(/"code"|\[\s*\{/);
      }
    });
  });

  describe("wording", () => {
    it("names the kind of a wrong value with its article, and a fractional or too large number as such", async () => {
      const { failures } = await c.plugin.client.check("IdleClosePolicy", {
        instanceUuid: { a: 1 },
        idlePeriodMinutes: 30,
        memoryThreshold: 1.5,
      });
      expect(failures).toEqual([
        { property: "instanceUuid", reason: expect.stringMatching(/, got an object$/) },
        {
          property: "memoryThreshold",
          reason: "memoryThreshold must be an integer from 0 to 100, got a fractional number",
        },
      ]);
      const big = await c.plugin.client.check("Instance", { ...c.spec, waitTimeoutSeconds: 1e300 });
      expect(big.failures).toEqual([
        {
          property: "waitTimeoutSeconds",
          reason: expect.stringMatching(
            /^waitTimeoutSeconds must be a whole number of seconds from 1 to 9007199254740991/,
          ),
        },
      ]);
    });

    it("takes a Check of more than grpc's default 4 MB, as the engine may send", async () => {
      const { failures } = await c.plugin.client.check("Instance", {
        ...c.spec,
        title: "x".repeat(5_000_000),
      });
      expect(failures).toEqual([
        { property: "title", reason: expect.stringMatching(/^title must be at most 50 characters/) },
      ]);
    });
  });
});
