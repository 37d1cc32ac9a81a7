/**
 * The catalogue room's store: the read-only GPU models, pods and market images an emulator serves, with the
 * lookups and filters the other rooms and the routes use.
 */
import { paramError } from "../core/http/errors";
import type { Catalogue, GpuModel, MarketImage, Pod, WebService } from "./entries";
import { BUILT_IN_CATALOGUE, MARKET_IMAGE_SERVICES } from "./seed";

/** Pods without their own `web_services` expose one service named after the pod, on this port. */
const DEFAULT_POD_SERVICE_PORT = 8888;

/** Version filters match the version itself or a more precise one: "12" matches "12.1" and "12.4". */
function versionMatches(actual: string, wanted: string): boolean {
  return actual === wanted || actual.startsWith(`${wanted}.`);
}

/** The read-only catalogue: GPU models, pods and market images. */
export class CatalogueStore {
  constructor(private readonly catalogue: Catalogue = BUILT_IN_CATALOGUE) {}

  gpus(): readonly GpuModel[] {
    return this.catalogue.gpus;
  }

  gpu(gpuUuid: string): GpuModel | undefined {
    return this.catalogue.gpus.find((g) => g.gpu_uuid === gpuUuid);
  }

  /**
   * The model a person means by `uuidOrName` (a gpu_uuid, or a gpu_name when no uuid matches), or why
   * none: the catalogue has no such model, or several share that name.
   */
  gpuCalled(uuidOrName: string): { gpu: GpuModel } | { problem: string; missing: boolean } {
    const byUuid = this.gpu(uuidOrName);
    if (byUuid !== undefined) return { gpu: byUuid };
    const named = this.catalogue.gpus.filter((gpu) => gpu.gpu_name === uuidOrName);
    if (named.length === 1) return { gpu: named[0] };
    if (named.length > 1) {
      const uuids = named.map((gpu) => gpu.gpu_uuid).join(", ");
      return {
        problem: `${uuidOrName} names ${named.length} GPU models (${uuids}); give its gpu_uuid`,
        missing: false,
      };
    }
    const names = this.catalogue.gpus.map((gpu) => gpu.gpu_name).join(", ");
    return { problem: `${uuidOrName} is no GPU model of the catalogue (${names})`, missing: true };
  }

  /** A GPU model usable for an instance; refuses unknown and invalid (status 0) models. */
  usableGpu(gpuUuid: string): GpuModel {
    const gpu = this.gpu(gpuUuid);
    if (!gpu) throw paramError("gpu_uuid", `no GPU model ${gpuUuid}; pick one from /gpu/list`);
    if (gpu.status !== 1)
      throw paramError("gpu_uuid", `GPU model ${gpu.gpu_name} is not available (status 0); pick a valid one`);
    return gpu;
  }

  // The name filter is a fuzzy match (docs/design/cloud-api.md#catalogues).
  /** Pods whose title contains `name`, case-insensitively, as /pod/list shows them. */
  pods(name?: string): Omit<Pod, "web_services">[] {
    const wanted = name?.toLowerCase() ?? "";
    return this.catalogue.pods
      .filter((p) => p.title.toLowerCase().includes(wanted))
      .map(({ web_services: _services, ...shown }) => shown);
  }

  pod(podUuid: string): Pod | undefined {
    return this.catalogue.pods.find((p) => p.uuid === podUuid);
  }

  /** What an instance exposes: its pod's web services, or JupyterLab for an image without a pod. */
  webServicesOf(podUuid: string): WebService[] {
    const pod = this.pod(podUuid);
    if (!pod) return MARKET_IMAGE_SERVICES.map((s) => ({ ...s }));
    return (pod.web_services ?? [{ title: pod.title, port: DEFAULT_POD_SERVICE_PORT }]).map((s) => ({
      ...s,
    }));
  }

  marketImages(filters: { cuda_version?: string; python_version?: string }): readonly MarketImage[] {
    return this.catalogue.market_images.filter(
      (i) =>
        (!filters.cuda_version || versionMatches(i.components.CUDA, filters.cuda_version)) &&
        (!filters.python_version || versionMatches(i.components.Python, filters.python_version)),
    );
  }

  marketImage(imageUuid: string): MarketImage | undefined {
    return this.catalogue.market_images.find((i) => i.uuid === imageUuid);
  }
}
