/**
 * The URNs the harness gives what a program registers are the engine's: a child's type is prefixed by its
 * parent's qualified type (which holds the parent's own parents), as @pulumi/pulumi's createUrn makes them,
 * and the root stack's type is left out.
 */
import { urnOf } from "../../testing/program";

const stack = { project: "proj", stack: "dev" };

describe("the engine's URNs", () => {
  it("names a resource at the top of the stack by its type and name", () => {
    expect(urnOf(stack, "gpucloud:index:Fleet", "trainers")).toBe(
      "urn:pulumi:dev::proj::gpucloud:index:Fleet::trainers",
    );
  });

  it("prefixes a child's type with its parent's, and a grandchild's with both", () => {
    const fleet = urnOf(stack, "gpucloud:index:Fleet", "trainers");
    const member = urnOf(stack, "gpucloud:index:Instance", "trainers-0", fleet);
    expect(member).toBe("urn:pulumi:dev::proj::gpucloud:index:Fleet$gpucloud:index:Instance::trainers-0");
    expect(urnOf(stack, "my:index:Probe", "probe", member)).toBe(
      "urn:pulumi:dev::proj::gpucloud:index:Fleet$gpucloud:index:Instance$my:index:Probe::probe",
    );
  });

  it("leaves the root stack out of its children's types", () => {
    const root = urnOf(stack, "pulumi:pulumi:Stack", "proj-dev");
    expect(urnOf(stack, "gpucloud:index:Fleet", "trainers", root)).toBe(
      "urn:pulumi:dev::proj::gpucloud:index:Fleet::trainers",
    );
  });
});
