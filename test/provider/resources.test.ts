import * as pulumi from "@pulumi/pulumi";
import { IdleClosePolicy, Instance, PersonalImage } from "pulumi-gpucloud";
import { settle } from "../harness";
import { INSTANCE_OUTPUTS } from "../support/design";

interface Registration {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

interface RegisterRequest {
  getName(): string;
  getAdditionalsecretoutputsList(): string[];
}

describe("resource classes under Pulumi's runtime mocks", () => {
  const registered: Registration[] = [];
  const secretOutputs = new Map<string, string[]>();

  beforeAll(async () => {
    await pulumi.runtime.setMocks(
      {
        newResource(args) {
          registered.push({ type: args.type, name: args.name, inputs: args.inputs });
          const cloudSide = args.type.endsWith(":Instance")
            ? { instanceUuid: "inst-1", status: 2, statusName: "running" }
            : {};
          return {
            id: args.type.endsWith(":Instance") ? "inst-1" : `${args.name}-id`,
            state: { ...args.inputs, ...cloudSide },
          };
        },
        call: (args) => args.inputs,
      },
      "project",
      "stack",
      false,
    );
    // The mocks' newResource does not see resource options; the request to the monitor does.
    const monitor = pulumi.runtime.getMonitor() as unknown as {
      registerResource(req: RegisterRequest, cb: unknown): unknown;
    };
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req, cb) => {
      secretOutputs.set(req.getName(), req.getAdditionalsecretoutputsList());
      return register(req, cb);
    };
  });

  it("wires an instance, its idle policy and an image saved from it", async () => {
    const gpu = new Instance("gpu", {
      podUuid: "pod-1",
      podTag: "v2",
      gpuUuid: "gpu-4090d",
      gpuNums: 2,
      title: "trainer",
    });
    const policy = new IdleClosePolicy("idle", { instanceUuid: gpu.instanceUuid, idlePeriodMinutes: 30 });
    const image = new PersonalImage("snap", { instanceUuid: gpu.instanceUuid });

    expect(await settle(gpu.instanceUuid)).toBe("inst-1");
    expect(await settle(gpu.statusName)).toBe("running");
    expect(await settle(policy.instanceUuid)).toBe("inst-1");
    expect(await settle(image.id)).toBe("snap-id");
    await Promise.all([settle(policy.urn), settle(image.urn), settle(gpu.urn)]);

    const byType = Object.fromEntries(registered.map((r) => [r.type, r]));
    expect(Object.keys(byType).sort()).toEqual([
      "pulumi-nodejs:dynamic/gpucloud:IdleClosePolicy",
      "pulumi-nodejs:dynamic/gpucloud:Instance",
      "pulumi-nodejs:dynamic/gpucloud:PersonalImage",
    ]);
    const instance = byType["pulumi-nodejs:dynamic/gpucloud:Instance"];
    const idle = byType["pulumi-nodejs:dynamic/gpucloud:IdleClosePolicy"];
    expect(instance.inputs).toMatchObject({
      podUuid: "pod-1",
      podTag: "v2",
      gpuUuid: "gpu-4090d",
      gpuNums: 2,
      title: "trainer",
    });
    expect(typeof instance.inputs.__provider).toBe("string");
    expect(idle.inputs).toMatchObject({ instanceUuid: "inst-1", idlePeriodMinutes: 30 });
    expect(secretOutputs.get("gpu")).toEqual(["sshPasswords"]);
  });

  it("exposes every documented output of an Instance", async () => {
    const gpu = new Instance("outputs", { imageUuid: "img-1", gpuUuid: "gpu-5090", gpuNums: 1 });
    const names = INSTANCE_OUTPUTS;
    await Promise.all([settle(gpu.urn), settle(gpu.id)]);
    expect(names.filter((name) => !pulumi.Output.isInstance(gpu[name]))).toEqual([]);
  });
});
