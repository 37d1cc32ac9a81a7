import {
  AmbiguousMatchError,
  getPod,
  getPodOutput,
  getPods,
  getPodsOutput,
  NoMatchError,
  Pod,
} from "../../provider/datasources";
import { pickPod } from "../../provider/datasources/pods";
import { API_KEY, requests, useDataSourceCloud, freshStart } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();

describe("getPods", () => {
  it("lists every pod with its tags, latest tag and hourly price in CNY", async () => {
    const { pods } = await getPods({}, { baseUrl: emu.url, apiKey: API_KEY });
    expect(pods.length).toBeGreaterThanOrEqual(3);
    for (const pod of pods) {
      expect(pod.podUuid).toEqual(expect.any(String));
      expect(pod.tags.length).toBeGreaterThan(0);
      expect(pod.latestTag).toBe(pod.tags[pod.tags.length - 1]);
      expect(typeof pod.hourlyPrice).toBe("number");
      expect(pod.currency).toBe("CNY");
      expect(pod.price).toMatchObject({ hour: pod.hourlyPrice, currency: "CNY" });
    }
  });

  it("needs no API key: the pod list is public", async () => {
    const { pods } = await getPods({}, { baseUrl: emu.url });
    expect(pods.length).toBeGreaterThanOrEqual(3);
    expect((await requests(emu, "/pod/list")).every((r) => r.status === 200)).toBe(true);
  });

  it("passes the name filter to the cloud's fuzzy match", async () => {
    const { pods: all } = await getPods({}, { baseUrl: emu.url });
    const { pods } = await getPods({ name: "webui" }, { baseUrl: emu.url });
    const expected = all.filter((p) => p.title.toLowerCase().includes("webui"));
    expect(expected.length).toBeGreaterThanOrEqual(2);
    expect(pods.map((p) => p.title)).toEqual(expected.map((p) => p.title));
  });

  it("walks every page when pages are smaller than the catalogue", async () => {
    const { pods: onePage } = await getPods({}, { baseUrl: emu.url });
    await freshStart(emu);
    const { pods: paged } = await getPods({}, { baseUrl: emu.url, pageSize: 1 });
    expect(paged).toEqual(onePage);
    // One request per page, and an empty one after the last: a full page never ends a walk.
    expect(await requests(emu, "/pod/list")).toHaveLength(onePage.length + 1);
  });

  it.each([0, 101, 2.5])("refuses a page size of %p before calling the cloud", async (pageSize) => {
    await expect(getPods({}, { baseUrl: emu.url, pageSize })).rejects.toThrow(
      `pageSize is ${pageSize}; it must be an integer from 1 to 100.`,
    );
    expect(await requests(emu)).toHaveLength(0);
  });

  it("has an Output form that takes Inputs", async () => {
    const { pods } = await resolveOutput(
      getPodsOutput({ name: Promise.resolve("comfy") }, { baseUrl: emu.url }),
    );
    expect(pods.map((p) => p.title)).toEqual(["ComfyUI"]);
  });
});

describe("getPod", () => {
  it("finds a pod by exact title and reports its latest tag as the tag to use", async () => {
    const pod = await getPod({ title: "ComfyUI" }, { baseUrl: emu.url });
    expect(pod.title).toBe("ComfyUI");
    expect(pod.tag).toBe(pod.latestTag);
    expect(pod.latestTag).toBe(pod.tags[pod.tags.length - 1]);
  });

  it("checks that a requested tag exists and selects it", async () => {
    const { tags } = await getPod({ title: "ComfyUI" }, { baseUrl: emu.url });
    const older = tags[0];
    const pod = await getPod({ title: "ComfyUI", tag: older }, { baseUrl: emu.url });
    expect(pod.tag).toBe(older);
    expect(pod.latestTag).not.toBe(older);
  });

  it("refuses a tag the pod lacks, listing the tags it has", async () => {
    const { tags } = await getPod({ title: "ComfyUI" }, { baseUrl: emu.url });
    const failure = getPod({ title: "ComfyUI", tag: "v9.9.9" }, { baseUrl: emu.url });
    await expect(failure).rejects.toBeInstanceOf(NoMatchError);
    await expect(failure).rejects.toThrow(
      `getPod: pod "ComfyUI" has no tag "v9.9.9"; its tags are ${tags.join(", ")}.`,
    );
  });

  it("matches the title exactly, suggesting near titles and listing every pod", async () => {
    const { pods } = await getPods({}, { baseUrl: emu.url });
    const failure = getPod({ title: "comfyui" }, { baseUrl: emu.url });
    await expect(failure).rejects.toBeInstanceOf(NoMatchError);
    await expect(failure).rejects.toThrow(
      `getPod: no pod is titled "comfyui". Did you mean "ComfyUI"? Pods: ${pods.map((p) => p.title).join(", ")}.`,
    );
  });

  it("reports an unknown title with the list of pods and no suggestion", async () => {
    await expect(getPod({ title: "Blender" }, { baseUrl: emu.url })).rejects.toThrow(
      /^getPod: no pod is titled "Blender"\. Pods: ComfyUI, /,
    );
  });

  it("has an Output form that takes Inputs", async () => {
    const pod = await resolveOutput(
      getPodOutput({ title: Promise.resolve("ComfyUI"), tag: undefined }, { baseUrl: emu.url }),
    );
    expect(pod.title).toBe("ComfyUI");
  });
});

describe("choosing a pod by title", () => {
  const pod = (podUuid: string, title: string, tags: string[]): Pod => ({
    podUuid,
    title,
    remark: "",
    tags,
    latestTag: tags[tags.length - 1],
    hourlyPrice: 0.1,
    currency: "CNY",
    price: { hour: 0.1, currency: "CNY" },
  });

  it("reports two pods with one title as ambiguous, naming both with their tags", () => {
    const catalogue = [
      pod("pod-a", "Lab", ["1", "2"]),
      pod("pod-b", "Lab", ["3"]),
      pod("pod-c", "Other", ["1"]),
    ];
    const choose = () => pickPod(catalogue, { title: "Lab" });
    expect(choose).toThrow(AmbiguousMatchError);
    expect(choose).toThrow(
      'getPod: 2 pods are titled "Lab": pod-a (tags 1, 2), pod-b (tags 3). Pick one from getPods and use its podUuid.',
    );
  });

  it("reports no tag for a pod without tags", () => {
    const selected = pickPod([pod("pod-a", "Bare", [])], { title: "Bare" });
    expect(selected.tag).toBeUndefined();
    expect(selected.latestTag).toBeUndefined();
  });
});
