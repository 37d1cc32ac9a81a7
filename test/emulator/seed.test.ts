import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emulator } from "pulumi-gpucloud/emulator";
import { z } from "zod";
import { loadSeed, seedPart } from "../../emulator/core/state/seed";
import { instanceInfo, startTestEmulator, type TestEmulator } from "./helpers";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const GPU = { gpu_name: "H100", gpu_uuid: "gpu-h100", status: 1, price: { hour: 9.5 } };
const POD = {
  title: "Text Generation WebUI",
  uuid: "pod-textgen",
  remark: "oobabooga",
  pod_tag: ["v1", "v2"],
  price: { hour: 0.5 },
  web_services: [{ title: "TextGen", port: 7861 }],
};
const PLAIN_POD = { title: "Blender Studio", uuid: "pod-blender", pod_tag: ["4.2"], price: { hour: 0 } };
const MARKET = {
  uuid: "img-custom",
  components: { CUDA: "12.6", Python: "3.12", PyTorch: "2.6.0" },
  size: 1000,
  created_at: 1_700_000_000,
  updated_at: 1_700_000_000,
};
const WORKFLOW = {
  workflow_id: "wf_upscale",
  revision_id: "rev_upscale_1",
  title: "Upscale",
  owner: { user_id: "acme", display_name: "Acme" },
  quote_amount: "0.30000000",
  gpu_model: "5090",
  editable_parameter_manifest: [
    { name: "image", value_type: "image_input", required: true },
    {
      name: "factor",
      value_type: "int",
      ui_schema: { control: "select", options: [{ label: "2x", value: 2 }] },
    },
  ],
  candidate_output_manifest: [{ name: "upscaled", type: "image" }],
  compute_rate_per_second: "0.01000000",
};
const VIDEO_MODEL = {
  model: "tiny-video",
  generation_categories: ["text_to_video"],
  price_per_second: { "360p": "0.01000000" },
  default_resolution: "360p",
  ratios: ["1:1"],
  min_duration: 1,
  max_duration: 4,
  default_duration: 2,
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpucloud-seed-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A seed file in this run's folder: the JSON of `content`, or `content` itself when it is text. */
function seedFile(content: unknown): string {
  const file = join(dir, `seed-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("--seed FILE", () => {
  describe("a full seed", () => {
    let t: TestEmulator;
    beforeAll(async () => {
      t = await startTestEmulator({
        seedFile: seedFile({
          gpus: [GPU],
          pods: [POD, PLAIN_POD],
          market_images: [MARKET],
          workflows: [WORKFLOW],
          video_models: [VIDEO_MODEL],
        }),
      });
    });
    afterAll(() => t.close());

    const data = async (path: string) => (await t.api("GET", path)).body.data;

    it("serves the seeded lists in the API's own field names, and nothing of the built-in ones", async () => {
      expect(await data("/gpu/list")).toEqual({ gpu_list: [GPU], total: 1 });
      const { web_services: _services, ...shownPod } = POD;
      expect(await data("/pod/list")).toEqual({
        pod_list: [shownPod, { ...PLAIN_POD, remark: "" }],
        total: 2,
      });
      const market = await data("/image/market/list");
      expect(market.image_list).toEqual([
        {
          ...MARKET,
          components: {
            CUDA: "12.6",
            PaddlePaddle: "",
            PyTorch: "2.6.0",
            Python: "3.12",
            TensorFlow: "",
            Ubuntu: "",
          },
        },
      ]);
      expect((await data("/workflow/market/list")).items.map((w: Json) => w.workflow_id)).toEqual([
        "wf_upscale",
      ]);
      expect(await data("/workflow/market/info?workflow_id=wf_upscale")).toMatchObject({
        revision_id: "rev_upscale_1",
        gpu_model: "5090",
        quote_amount: "0.30000000",
      });
    });

    it("creates instances from seeded pods with their services, named for the pod when not given", async () => {
      const create = async (pod_uuid: string) =>
        (
          await t.api("POST", "/instance/create_by_pod", {
            body: { pod_uuid, gpu_uuid: "gpu-h100", gpu_nums: 1 },
          })
        ).body.data.instance_uuid;
      const titles = async (uuid: string) =>
        (await instanceInfo(t, uuid)).body.data.server_map.map((e: Json) => e.title);
      expect(await titles(await create("pod-textgen"))).toEqual(["TextGen", "SSH"]);
      expect(await titles(await create("pod-blender"))).toEqual(["Blender Studio", "SSH"]);
      expect((await t.api("GET", "/balance/info")).body.data.balance).toBe(1000 - 10 - 9.5);
    });

    it("runs seeded workflows and video models, and keeps the seed across a reset", async () => {
      await t.admin("POST", "/reset");
      const run = await t.api("POST", "/workflow/run/submit", {
        body: {
          workflow_id: "wf_upscale",
          idempotency_key: "k",
          inputs: { image: "https://example.com/a.png", factor: 2 },
        },
      });
      expect(run.body.data).toMatchObject({ quote_amount: "0.30000000", idempotent_replay: false });
      await t.advance(25);
      expect((await data(`/workflow/run/info?run_order_id=${run.body.data.run_order_id}`)).total_cost).toBe(
        "0.20000000",
      );
      const video = await t.api("POST", "/model-runs/videos", {
        body: { idempotency_key: "v", inputs: { model: "tiny-video", prompt: "p" } },
      });
      expect(video.body.data.frozen_amount).toBe("0.02000000");
      expect(
        (
          await t.api("POST", "/model-runs/videos", {
            body: { idempotency_key: "w", inputs: { model: "demo-video", prompt: "p" } },
          })
        ).body.msg,
      ).toMatch(/^inputs\.model: unknown video model demo-video/);
      expect((await data("/gpu/list")).gpu_list).toEqual([GPU]);
    });
  });

  it("keeps the built-in list of every key left out", async () => {
    const t = await startTestEmulator({ seedFile: seedFile({ gpus: [GPU] }) });
    try {
      expect((await t.api("GET", "/gpu/list")).body.data.total).toBe(1);
      expect((await t.api("GET", "/pod/list")).body.data.pod_list.map((p: Json) => p.title)).toContain(
        "ComfyUI",
      );
      expect((await t.api("GET", "/workflow/market/list")).body.data.total).toBe(2);
    } finally {
      await t.close();
    }
  });

  it.each([
    [
      "a price in words",
      { pods: [POD, { ...PLAIN_POD, price: { hour: "cheap" } }] },
      "pods[1].price.hour: must be a number",
    ],
    ["a repeated id", { gpus: [GPU, { ...GPU }] }, "gpus[1].gpu_uuid: repeats [0]'s gpu_uuid gpu-h100"],
    [
      "an unknown status",
      { gpus: [{ ...GPU, status: 2 }] },
      "gpus[0].status: must be 1 (valid) or 0 (not available)",
    ],
    ["a misspelt list", { gpu: [GPU] }, "has an unknown field: gpu"],
    ["a list that is an object", { pods: { 0: POD } }, "pods: must be an array"],
    [
      "an unknown value_type",
      { workflows: [{ ...WORKFLOW, editable_parameter_manifest: [{ name: "x", value_type: "blob" }] }] },
      "workflows[0].editable_parameter_manifest[0].value_type: must be one of string, int, float, bool",
    ],
    [
      "a time in words",
      { workflows: [{ ...WORKFLOW, updated_at: "yesterday" }] },
      "workflows[0].updated_at: must be an ISO 8601 time",
    ],
    [
      "an unpriced default resolution",
      { video_models: [{ ...VIDEO_MODEL, default_resolution: "8k" }] },
      "video_models[0].default_resolution: must be one of the priced resolutions (360p)",
    ],
    ["an empty id", { market_images: [{ ...MARKET, uuid: "" }] }, "market_images[0].uuid: must not be empty"],
    // A misspelt optional field would otherwise be dropped without a word, and its default used.
    ["a misspelt field", { pods: [{ ...POD, remakr: "x" }] }, "pods[0]: has an unknown field: remakr"],
    [
      "an unknown field deep inside an entry",
      { pods: [POD, { ...PLAIN_POD, web_services: [{ title: "UI", port: 80, proto: "udp" }] }] },
      "pods[1].web_services[0]: has an unknown field: proto",
    ],
    [
      "an unknown price period",
      { gpus: [{ ...GPU, price: { hour: 1, fortnight: 10 } }] },
      "gpus[0].price: has an unknown field: fortnight",
    ],
    [
      "a GPU model the API does not report for a workflow",
      { workflows: [{ ...WORKFLOW, gpu_model: "H100" }] },
      "workflows[0].gpu_model: must be one of 4080, 4090D, 5090",
    ],
    [
      "an image size in fractions of a byte",
      { market_images: [{ ...MARKET, size: 1.5 }] },
      "market_images[0].size: must be an integer",
    ],
    [
      "a quote in another currency",
      { workflows: [{ ...WORKFLOW, quote_currency: "USD" }] },
      'workflows[0].quote_currency: must be "CNY", the only currency quotes are in',
    ],
    [
      "a misspelt workflow field",
      { workflows: [{ ...WORKFLOW, publc: false }] },
      "workflows[0]: has an unknown field: publc",
    ],
    [
      "an unknown field of a manifest entry",
      { workflows: [{ ...WORKFLOW, candidate_output_manifest: [{ name: "o", type: "image", fmt: "png" }] }] },
      "workflows[0].candidate_output_manifest[0]: has an unknown field: fmt",
    ],
    [
      "an unknown field of a video model",
      { video_models: [{ ...VIDEO_MODEL, max_fps: 30 }] },
      "video_models[0]: has an unknown field: max_fps",
    ],
  ])("refuses %s, naming the file, the entry and the field", (_what, content, message) => {
    const file = seedFile(content);
    expect(() => new Emulator({ seedFile: file })).toThrow(`seed file ${file} is refused: ${message}`);
  });

  it("takes the catalogue as the API answers it back as a seed: the lists, and each workflow's info", async () => {
    const source = await startTestEmulator();
    let seed: Json;
    try {
      const data = async (path: string) => (await source.api("GET", path)).body.data;
      const workflows = (await data("/workflow/market/list?page_size=100")).items as Json[];
      seed = {
        gpus: (await data("/gpu/list")).gpu_list,
        pods: (await data("/pod/list?page_size=100")).pod_list,
        market_images: (await data("/image/market/list?page_size=100")).image_list,
        workflows: await Promise.all(
          workflows.map((w) => data(`/workflow/market/info?workflow_id=${w.workflow_id}`)),
        ),
      };
    } finally {
      await source.close();
    }
    const copy = await startTestEmulator({ seedFile: seedFile(seed) });
    try {
      const data = async (path: string) => (await copy.api("GET", path)).body.data;
      expect((await data("/gpu/list")).gpu_list).toEqual(seed.gpus);
      expect((await data("/pod/list?page_size=100")).pod_list).toEqual(seed.pods);
      expect((await data("/image/market/list?page_size=100")).image_list).toEqual(seed.market_images);
      for (const workflow of seed.workflows)
        expect(await data(`/workflow/market/info?workflow_id=${workflow.workflow_id}`)).toEqual(workflow);
    } finally {
      await copy.close();
    }
  });

  it("refuses a seed file that is not JSON, naming it", () => {
    const file = seedFile("{ gpus: ");
    expect(() => new Emulator({ seedFile: file })).toThrow(`seed file ${file} is not valid JSON`);
  });
});

describe("the seed loader", () => {
  // Parts no emulator area has: the loader serves whatever parts it is given, and knows none of them.
  const colours = seedPart({ colours: z.array(z.string()) }, (inFile) => inFile.colours ?? ["red"]);
  const shapes = seedPart({ shapes: z.array(z.string()), sizes: z.array(z.int()) }, (inFile) => ({
    shapes: inFile.shapes ?? ["circle"],
    sizes: inFile.sizes ?? [1],
  }));

  it("gives each part the lists the file holds, and its built-in ones for the lists left out", () => {
    const seed = loadSeed([colours, shapes], seedFile({ colours: ["blue"], sizes: [3, 4] }));
    expect(seed.of(colours)).toEqual(["blue"]);
    expect(seed.of(shapes)).toEqual({ shapes: ["circle"], sizes: [3, 4] });
  });

  it("gives every part its built-in seed without a file", () => {
    const seed = loadSeed([colours, shapes]);
    expect(seed.of(colours)).toEqual(["red"]);
    expect(seed.of(shapes)).toEqual({ shapes: ["circle"], sizes: [1] });
  });

  it("refuses a list no part reads, and a list of the wrong kind, naming the file and the list", () => {
    const unread = seedFile({ colours: ["blue"], flavours: ["mint"] });
    expect(() => loadSeed([colours, shapes], unread)).toThrow(
      `seed file ${unread} is refused: has an unknown field: flavours`,
    );
    const wrong = seedFile({ sizes: ["big"] });
    expect(() => loadSeed([colours, shapes], wrong)).toThrow(`seed file ${wrong} is refused: sizes[0]:`);
  });

  it("refuses a list named constructor unless a part reads it, and then gives that part no inherited one", () => {
    const inherited = seedFile({ constructor: ["x"] });
    expect(() => loadSeed([colours], inherited)).toThrow("has an unknown field: constructor");
    const named = seedPart({ constructor: z.array(z.string()) }, (inFile) => inFile.constructor ?? []);
    expect(loadSeed([named]).of(named)).toEqual([]);
  });

  it("refuses two parts that read one list, with or without a file", () => {
    const moreColours = seedPart({ colours: z.array(z.string()) }, (inFile) => inFile.colours ?? []);
    expect(() => loadSeed([colours, moreColours])).toThrow("two seed parts read the list colours");
  });

  it("refuses to serve a part it was not loaded with", () => {
    expect(() => loadSeed([colours]).of(shapes)).toThrow(
      "the seed was loaded without the part of shapes, sizes",
    );
  });
});
