import { paramError } from "../core/errors";
import { type GpuModel, type MarketImage, type Pod, SEED_GPUS, SEED_MARKET_IMAGES, SEED_PODS } from "./seed";

/** Version filters match the version itself or a more precise one: "12" matches "12.1" and "12.4". */
function versionMatches(actual: string, wanted: string): boolean {
  return actual === wanted || actual.startsWith(`${wanted}.`);
}

/** The read-only catalogue: GPU models, pods and market images. */
export class CatalogueStore {
  gpus(): readonly GpuModel[] {
    return SEED_GPUS;
  }

  /** A GPU model usable for an instance; refuses unknown and invalid (status 0) models. */
  usableGpu(gpuUuid: string): GpuModel {
    const gpu = SEED_GPUS.find((g) => g.gpu_uuid === gpuUuid);
    if (!gpu) throw paramError("gpu_uuid", `no GPU model ${gpuUuid}; pick one from /gpu/list`);
    if (gpu.status !== 1)
      throw paramError("gpu_uuid", `GPU model ${gpu.gpu_name} is not available (status 0); pick a valid one`);
    return gpu;
  }

  /** Pods whose title contains `name`, case-insensitively (api-v2.md: fuzzy match). */
  pods(name?: string): readonly Pod[] {
    if (!name) return SEED_PODS;
    const wanted = name.toLowerCase();
    return SEED_PODS.filter((p) => p.title.toLowerCase().includes(wanted));
  }

  pod(podUuid: string): Pod | undefined {
    return SEED_PODS.find((p) => p.uuid === podUuid);
  }

  marketImages(filters: { cuda_version?: string; python_version?: string }): readonly MarketImage[] {
    return SEED_MARKET_IMAGES.filter(
      (i) =>
        (!filters.cuda_version || versionMatches(i.components.CUDA, filters.cuda_version)) &&
        (!filters.python_version || versionMatches(i.components.Python, filters.python_version)),
    );
  }

  marketImage(imageUuid: string): MarketImage | undefined {
    return SEED_MARKET_IMAGES.find((i) => i.uuid === imageUuid);
  }
}
