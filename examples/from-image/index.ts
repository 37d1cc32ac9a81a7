/**
 * An instance from a market image chosen by its CUDA and Python versions, and a personal image saved
 * from that instance.
 *
 *   pulumi config set image:cudaVersion 12.4
 *   pulumi config set image:pythonVersion 3.11
 *   pulumi up
 */
import * as pulumi from "@pulumi/pulumi";
import * as gpucloud from "pulumi-gpucloud";

// An exported function is the program: the Pulumi CLI calls it and its result becomes the stack outputs.
export = async () => {
  const config = new pulumi.Config("image");
  const cudaVersion = config.get("cudaVersion") ?? "12.4";
  const pythonVersion = config.get("pythonVersion") ?? "3.11";
  const gpuModel = config.get("gpuModel") ?? "4090D";

  const gpu = await gpucloud.getGpu({ name: gpuModel });
  const { images } = await gpucloud.getMarketImages({ cudaVersion, pythonVersion });
  if (images.length === 0) {
    throw new Error(
      `No market image has CUDA ${cudaVersion} and Python ${pythonVersion}. ` +
        "Pick other versions with `pulumi config set image:cudaVersion ...` and `image:pythonVersion ...`.",
    );
  }
  // The newest image of those versions: its other components (PyTorch, Ubuntu) are the most recent.
  const image = images.reduce((a, b) => ((b.createdAt ?? 0) > (a.createdAt ?? 0) ? b : a));

  const notebook = new gpucloud.Instance("notebook", {
    imageUuid: image.imageUuid,
    gpuUuid: gpu.gpuUuid,
    gpuNums: 1,
    title: `cuda${cudaVersion}-py${pythonVersion}`,
  });
  const snapshot = new gpucloud.PersonalImage("notebook-image", { instanceUuid: notebook.instanceUuid });

  return {
    marketImage: { imageUuid: image.imageUuid, components: image.components },
    instanceUuid: notebook.instanceUuid,
    serviceUrls: notebook.serverUrls,
    personalImageUuid: snapshot.imageUuid,
    personalImageStatus: snapshot.saveImageStatus,
  };
};
