/**
 * The catalogue room's seed (docs/design/contracts.md#seed-catalogue): the built-in GPU models, pods and
 * market images, and the catalogue's part of a `--seed FILE`. Ids are fixed literals so they stay the same
 * across resets and restarts; tests should still look things up by gpu_name or pod title.
 */
import { seedPart } from "../core/state/seed";
import { uniqueList } from "../core/state/schema";
import {
  type Catalogue,
  type GpuModel,
  gpuModelSchema,
  type MarketImage,
  marketImageSchema,
  type Pod,
  podSchema,
  type WebService,
} from "./entries";

export const SEED_GPUS: readonly GpuModel[] = [
  {
    gpu_name: "4080",
    gpu_uuid: "gpu-5b1e4080a1c2d3e4",
    status: 1,
    price: { hour: 1.28, day: 28.8, week: 188, month: 760 },
  },
  {
    gpu_name: "4090D",
    gpu_uuid: "gpu-7c2f4090d5e6f7a8",
    status: 1,
    price: { hour: 1.88, day: 42.5, week: 276, month: 1090 },
  },
  {
    gpu_name: "5090",
    gpu_uuid: "gpu-9d3a5090b9c0d1e2",
    status: 1,
    price: { hour: 2.98, day: 68, week: 440, month: 1720, year: 18800 },
  },
  { gpu_name: "3090", gpu_uuid: "gpu-1a4b3090f3a4b5c6", status: 0, price: { hour: 0.98 } },
];

export const SEED_PODS: readonly Pod[] = [
  {
    title: "ComfyUI",
    uuid: "pod-3e8c1f0a9b7d6e54",
    remark: "Node-based Stable Diffusion workflows with common custom nodes",
    pod_tag: ["v1.0.0", "v1.2.5", "v1.3.1"],
    price: { hour: 0.2, day: 4.5 },
    web_services: [{ title: "ComfyUI", port: 8188 }],
  },
  {
    title: "Stable Diffusion WebUI",
    uuid: "pod-6a2d9c4e1f3b8a70",
    remark: "AUTOMATIC1111 web interface",
    pod_tag: ["v1.8.0", "v1.9.4", "v1.10.1"],
    price: { hour: 0.1 },
    // Public clients look for an http entry titled WebUI on this pod.
    web_services: [{ title: "WebUI", port: 7860 }],
  },
  {
    title: "JupyterLab PyTorch",
    uuid: "pod-9f5b2a7c3d1e6b82",
    remark: "JupyterLab with PyTorch and CUDA toolkits",
    pod_tag: ["2024.06", "2025.01"],
    price: { hour: 0 },
    web_services: [{ title: "JupyterLab", port: 8888 }],
  },
  {
    title: "Ollama Open WebUI",
    uuid: "pod-2c7e5b9a4f8d1c63",
    remark: "Local LLM serving with a chat interface",
    pod_tag: ["0.3.14", "0.5.7"],
    price: { hour: 0.05, day: 1.1 },
    web_services: [
      { title: "Open WebUI", port: 8080 },
      { title: "Ollama API", port: 11434 },
    ],
  },
];

function marketImage(
  uuid: string,
  cuda: string,
  python: string,
  pytorch: string,
  tensorflow: string,
  paddle: string,
  ubuntu: string,
  sizeGb: number,
  created: number,
): MarketImage {
  return {
    uuid,
    components: {
      CUDA: cuda,
      PaddlePaddle: paddle,
      PyTorch: pytorch,
      Python: python,
      TensorFlow: tensorflow,
      Ubuntu: ubuntu,
    },
    size: Math.round(sizeGb * 1024 ** 3),
    created_at: created,
    updated_at: created + 86_400 * 30,
  };
}

export const SEED_MARKET_IMAGES: readonly MarketImage[] = [
  marketImage("img-a1b2c3d4e5f60718", "11.8", "3.10", "2.0.1", "", "", "22.04", 8.2, 1_704_067_200),
  marketImage("img-b2c3d4e5f6071829", "12.1", "3.10", "2.1.2", "", "", "22.04", 9.1, 1_709_251_200),
  marketImage("img-c3d4e5f60718293a", "12.1", "3.11", "", "2.15.0", "", "22.04", 7.4, 1_711_929_600),
  marketImage("img-d4e5f60718293a4b", "12.4", "3.11", "2.4.0", "", "", "22.04", 10.3, 1_719_792_000),
  marketImage("img-e5f60718293a4b5c", "12.4", "3.12", "2.5.1", "", "3.0.0", "24.04", 12.6, 1_727_740_800),
  marketImage("img-f60718293a4b5c6d", "12.8", "3.12", "2.7.0", "", "", "24.04", 11.8, 1_740_787_200),
  marketImage("img-0718293a4b5c6d7e", "11.8", "3.9", "", "2.13.1", "2.6.1", "20.04", 9.7, 1_696_118_400),
];

/** What an instance of a market image (which has no pod) exposes: the JupyterLab every such image runs. */
export const MARKET_IMAGE_SERVICES: readonly WebService[] = [{ title: "JupyterLab", port: 8888 }];

/** A display name for a market image, which has only components (used as an instance's image_name). */
export function marketImageName(image: MarketImage): string {
  const c = image.components;
  const framework = c.PyTorch ? `pytorch${c.PyTorch}` : c.TensorFlow ? `tensorflow${c.TensorFlow}` : "base";
  return `${framework}-cuda${c.CUDA}-py${c.Python}-ubuntu${c.Ubuntu}`;
}

export const BUILT_IN_CATALOGUE: Catalogue = {
  gpus: SEED_GPUS,
  pods: SEED_PODS,
  market_images: SEED_MARKET_IMAGES,
};

/** The catalogue's part of a `--seed FILE`: each of its lists replaces the built-in one. */
export const CATALOGUE_SEED = seedPart(
  {
    gpus: uniqueList(gpuModelSchema, (g) => g.gpu_uuid, "gpu_uuid"),
    pods: uniqueList(podSchema, (p) => p.uuid, "uuid"),
    market_images: uniqueList(marketImageSchema, (i) => i.uuid, "uuid"),
  },
  (inFile): Catalogue => ({
    gpus: inFile.gpus ?? BUILT_IN_CATALOGUE.gpus,
    pods: inFile.pods ?? BUILT_IN_CATALOGUE.pods,
    market_images: inFile.market_images ?? BUILT_IN_CATALOGUE.market_images,
  }),
);
