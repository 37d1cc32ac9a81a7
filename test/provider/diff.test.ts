/**
 * The declared diff answers per input (what changed, how, and whether it replaces), as a native plugin's
 * detailed diff needs; the dynamic provider's changes and replaces are collapsed from it.
 */
import { providers } from "../../provider/dynamic";
import { diffResource } from "../../provider/framework/dynamic-provider";
import { idleClosePolicy } from "../../provider/resources/idle-close-policy";
import { instance } from "../../provider/resources/instance/definition";
import { personalImage } from "../../provider/resources/personal-image";
import { UNKNOWN } from "../harness";

const program = {
  podUuid: "pod-1",
  gpuUuid: "gpu-1",
  gpuNums: 1,
  title: "a",
  running: true,
  waitTimeoutSeconds: 900,
};
/** What the engine stores: every input beside the outputs. */
const stored = { ...program, instanceUuid: "i-1", status: 2 };

describe("the declared diff", () => {
  it("names each changed input with its kind, and whether it replaces", () => {
    const diff = diffResource(instance, "i-1", stored, {
      ...program,
      title: "b",
      gpuNums: 2,
      podTag: "v2",
      running: UNKNOWN,
    });
    expect(diff).toEqual({
      properties: {
        gpuNums: { kind: "update", replace: true },
        title: { kind: "update", replace: false },
        running: { kind: "update", replace: false },
        podTag: { kind: "add", replace: true },
      },
      changes: true,
      replaces: ["podTag", "gpuNums"],
    });
  });

  it("replaces an instance for a pod tag other than the one it runs, never for that one or for a pin removed", () => {
    const running = { ...stored, imageTag: "v1" };
    // A program that pins the tag the instance runs (or an import, which records it:
    // docs/design/contracts.md#the-native-plugin).
    expect(diffResource(instance, "i-1", running, { ...program, podTag: "v1" })).toMatchObject({
      changes: false,
    });
    const pinned = { ...running, podTag: "v1" };
    expect(diffResource(instance, "i-1", pinned, program)).toMatchObject({ changes: false });
    expect(diffResource(instance, "i-1", pinned, { ...program, podTag: "v2" })).toMatchObject({
      properties: { podTag: { kind: "update", replace: true } },
      replaces: ["podTag"],
    });
    // Unknown at preview, or a tag the cloud does not report: the conservative answer, a replacement.
    expect(diffResource(instance, "i-1", running, { ...program, podTag: UNKNOWN }).replaces).toEqual([
      "podTag",
    ]);
    expect(diffResource(instance, "i-1", stored, { ...program, podTag: "v1" }).replaces).toEqual(["podTag"]);
  });

  it("reports an input the program stops setting as back at its default", () => {
    const policy = {
      instanceUuid: "i-1",
      idlePeriodMinutes: 10,
      destroyOnIdle: true,
      gpuThreshold: 0,
      memoryThreshold: 0,
    };
    const { destroyOnIdle: _destroy, ...withoutDestroy } = policy;
    expect(diffResource(idleClosePolicy, "i-1", policy, withoutDestroy).properties).toEqual({
      destroyOnIdle: { kind: "update", replace: false },
    });
  });

  it("sees no change in an input added with a default, for a resource stored before it existed", () => {
    const checked = { ...program, waitForServices: false };
    expect(diffResource(instance, "i-1", stored, checked)).toMatchObject({ changes: false, properties: {} });
    expect(diffResource(instance, "i-1", stored, { ...checked, waitForServices: true }).properties).toEqual({
      waitForServices: { kind: "update", replace: false },
    });
  });

  it("takes adopting the resource's own id, or no longer adopting it, as no change", () => {
    const adopted = { ...stored, adoptInstanceUuid: "i-1" };
    expect(diffResource(instance, "i-1", stored, { ...program, adoptInstanceUuid: "i-1" }).changes).toBe(
      false,
    );
    expect(diffResource(instance, "i-1", adopted, program).changes).toBe(false);
    expect(diffResource(instance, "i-1", adopted, { ...program, adoptInstanceUuid: "i-2" }).replaces).toEqual(
      ["adoptInstanceUuid"],
    );
    const image = { adoptImageUuid: "img-1", waitTimeoutSeconds: 900, imageUuid: "img-1" };
    expect(
      diffResource(personalImage, "img-1", image, { instanceUuid: "i-1", waitTimeoutSeconds: 900 }).replaces,
    ).toEqual(["instanceUuid"]);
  });

  it("is what the dynamic provider answers, collapsed", async () => {
    const news = { ...program, title: "b", gpuNums: 2 };
    expect(await providers.Instance.diff("i-1", stored, news)).toEqual({
      changes: true,
      replaces: diffResource(instance, "i-1", stored, news).replaces,
      deleteBeforeReplace: false,
    });
  });
});
