/**
 * What the engine makes of a provider's failure, as the harness reports it: a failed read, update or
 * delete answered UNKNOWN (or INTERNAL, DATA_LOSS) leaves the resource's status unknown and the whole
 * operation `maybeCorrupt`, as the Pulumi CLI's summary says; a definite code does not, nor does a failed
 * create. The native plugin answers definite failures with definite codes; Pulumi's own dynamic-provider
 * server answers UNKNOWN to everything, so the same failure through the dynamic door is `maybeCorrupt`.
 */
import { status } from "@grpc/grpc-js";
import { userOfKeySpec } from "pulumi-gpucloud/emulator";
import { dynamicFrontDoor, nativeFrontDoor, ProviderCallError, type FrontDoorFactory } from "../../testing";
import { API_KEY, openExample, type ExampleRun } from "../examples/helpers";
import { failureOf } from "../support/operations";

jest.setTimeout(120_000);

/** The provider's failure among the causes of `err`. */
function providerFailure(err: unknown): ProviderCallError | undefined {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof ProviderCallError) return e;
  return undefined;
}

interface Expected {
  refusedCreate: status;
  unreadableList: status;
  failedUpdate: status;
}

const DOORS: [string, () => FrontDoorFactory, Expected][] = [
  [
    "native",
    nativeFrontDoor,
    {
      refusedCreate: status.FAILED_PRECONDITION,
      unreadableList: status.UNAVAILABLE,
      failedUpdate: status.UNAVAILABLE,
    },
  ],
  // Pulumi's dynamic-provider server answers UNKNOWN to every failed create and update, whatever the provider threw.
  [
    "dynamic",
    dynamicFrontDoor,
    { refusedCreate: status.UNKNOWN, unreadableList: status.UNAVAILABLE, failedUpdate: status.UNKNOWN },
  ],
];

describe.each(DOORS)("failures through the %s door, as the engine reads them", (door, frontDoor, codes) => {
  let run: ExampleRun;
  beforeAll(async () => {
    const config = { "fleet:count": "1", "fleet:waitForServices": "false" };
    run = await openExample("fleet", config, { frontDoor: frontDoor() });
  });
  afterAll(() => run?.close());

  const setBalance = async (balance: number) => {
    const answer = await fetch(`${run.emulator.url}/_emulator/users/${userOfKeySpec(API_KEY)}/balance`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ balance }),
    });
    expect(answer.status).toBe(200);
  };
  /** Runs `operation` while every call of `apiPath` answers 503. */
  const unavailable = async <T>(apiPath: string, operation: () => Promise<T>): Promise<T> => {
    run.emulator.emulator.faults.add({ path: apiPath, kind: "http_503", probability: 1 });
    try {
      return await operation();
    } finally {
      run.emulator.emulator.faults.clear();
    }
  };

  it("a create the cloud refuses never leaves the update possibly corrupt", async () => {
    await setBalance(0);
    try {
      const failure = await failureOf(run.stack.up());
      expect(failure.message).toContain("insufficient balance");
      expect(providerFailure(failure.failures[0])?.code).toBe(codes.refusedCreate);
      expect(failure.maybeCorrupt).toBe(false);
    } finally {
      await setBalance(1000);
    }
    expect((await run.api.instances.list()).total).toBe(0);
  });

  it("a refresh whose instance list cannot be read fails without leaving it possibly corrupt", async () => {
    await run.stack.up();
    const failure = await unavailable("/instance/list", () => failureOf(run.stack.refresh()));
    expect(providerFailure(failure.failures[0])?.code).toBe(codes.unreadableList);
    expect(failure.maybeCorrupt).toBe(false);
  });

  it(`an update the cloud keeps failing ${door === "native" ? "is definite" : "is reported possibly corrupt"}`, async () => {
    await run.stack.setConfig({ ...run.config, "fleet:idleMinutes": "60" });
    const failure = await unavailable("/instance/set_idle_close", () => failureOf(run.stack.up()));
    expect(failure.steps.find((s) => s.name === "fleet-0-idle")?.op).toBe("update");
    expect(providerFailure(failure.failures[0])?.code).toBe(codes.failedUpdate);
    expect(failure.maybeCorrupt).toBe(door === "dynamic");
    await run.stack.destroy();
    expect((await run.api.instances.list()).total).toBe(0);
  });
});
