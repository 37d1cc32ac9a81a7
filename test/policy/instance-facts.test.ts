/**
 * The cost guard reads an Instance's inputs as the Instance's definition declares them: every input,
 * with no line of its own, its type and default taken from its schema, a preview's unknowns kept apart.
 */
import { instanceFacts, Unknown } from "../../provider/policy/resources";
import { InstanceInputs } from "../../provider/resources/instance/inputs";
import { instance, UNKNOWN } from "./stack-view";

/** A value of each input's type that its Check accepts. */
const DECLARED: Record<string, unknown> = {
  podUuid: "pod-1",
  podTag: "v2",
  imageUuid: "image-1",
  gpuUuid: "gpu-1",
  fallbackGpuUuids: ["gpu-2", "gpu-3"],
  gpuNums: 2,
  title: "trainer",
  running: false,
  shutdownAt: "2030-01-02T03:04:05Z",
  waitTimeoutSeconds: 60,
  waitForServices: true,
  adoptInstanceUuid: "instance-1",
};

const facts = (props: Record<string, unknown>) => instanceFacts(instance("i", props)) as object;

describe("an Instance's facts, read by its definition", () => {
  it("carry every input the definition declares, as declared", () => {
    expect(Object.keys(DECLARED).sort()).toEqual(Object.keys(InstanceInputs.shape).sort());
    expect(facts(DECLARED)).toMatchObject(DECLARED);
  });

  it("take an input's default when it is absent or of a type the input does not take, and nothing else", () => {
    const absent = Object.fromEntries(Object.keys(DECLARED).map((name) => [name, undefined]));
    expect(facts(absent)).toMatchObject({
      running: true,
      waitTimeoutSeconds: 900,
      waitForServices: false,
      gpuNums: undefined,
      title: undefined,
    });
    const mistyped = facts({ gpuNums: "2", running: "no", shutdownAt: true, title: null });
    expect(mistyped).toMatchObject({
      gpuNums: undefined,
      running: true,
      shutdownAt: undefined,
      title: undefined,
    });
  });

  it("keep a preview's unknowns apart, the power state included", () => {
    const unknown = facts({ gpuNums: UNKNOWN, running: UNKNOWN, title: UNKNOWN }) as Record<string, unknown>;
    for (const name of ["gpuNums", "running", "title"]) expect(unknown[name]).toBeInstanceOf(Unknown);
  });
});
