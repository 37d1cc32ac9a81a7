/**
 * Fallback between GPU models (docs/resources.md#gpu-fallbacks): a create, or the start of a stopped
 * instance, that the cloud refuses for one model goes on to the next of gpuUuid and fallbackGpuUuids.
 *
 * The API shows no stock and no word for "no free cards". What it does say is that a business failure
 * (envelope code 1) is the cloud's answer that the call failed: nothing was made, nothing charged. Such an
 * answer to a create or start call is a refusal of that model, definite, so the next model is tried at
 * once, never the same one again. An answer that is not a refusal (a lost answer, an unreadable one, a
 * 5xx) is no refusal: a create's goes to the lost-create recovery of that model's spec, which lists the
 * instances to tell whether it made one, and a start's to the power change's own read-back.
 */
import { BusinessError, type Instance as CloudInstance, type StartupParams } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { messageOf } from "../../framework/errors";
import { specOf } from "./create-spec";
import { assertModelsKnown, gpuCatalogue, modelsOf } from "./gpu-choices";
import type { InstanceInputs } from "./inputs";
import { instanceRecovery } from "./memory";
import { changePower, type PowerDeadline } from "./power";

const CREATE_CALLS = ["/instance/create_by_pod", "/instance/create_by_image"];
const START_CALL = "/instance/startup";

/** A business failure (envelope code 1) answered to one of `paths`: the cloud made nothing of it. */
function isRefusal(err: unknown, paths: readonly string[]): err is BusinessError {
  return err instanceof BusinessError && err.code === 1 && paths.includes(err.path);
}

interface Refusal {
  model: string;
  refusal: BusinessError;
}

/**
 * Creates on the first model of the list the cloud does not refuse; `create` makes, marks and
 * converges one instance on the model its inputs name (`listed`: after a refusal, whose listing stands).
 * Without fallbacks it is `create` as it is. A
 * model with a pending create of this resource is tried first, so that its recovery, not a create on
 * another model, settles it.
 */
export async function createOnFirstFreeModel(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  create: (onModel: InstanceInputs, listed: boolean) => Promise<CloudInstance>,
): Promise<CloudInstance> {
  if (inputs.fallbackGpuUuids === undefined) return create(inputs, false);
  await assertModelsKnown(ctx, inputs).catch((err: unknown) => {
    throw new Error(
      `Could not create instance: the fallbackGpuUuids could not be checked against the GPU catalogue (${messageOf(err)}). ` +
        "Nothing was sent to the cloud; run `pulumi up` again.",
      { cause: err },
    );
  });
  const refusals: Refusal[] = [];
  for (const model of pendingFirst(ctx, inputs)) {
    if (refusals.length > 0)
      ctx.progress(`Creating instance: ${refusedSoFar(refusals)}; trying GPU model ${model}`);
    try {
      // The listing before the refused call stands: the refusal made nothing that a new one could show.
      return await create({ ...inputs, gpuUuid: model }, refusals.length > 0);
    } catch (err) {
      if (!isRefusal(err, CREATE_CALLS)) throw err;
      refusals.push({ model, refusal: err });
    }
  }
  throw new Error(
    `Could not create instance: the cloud refused every GPU model of gpuUuid and fallbackGpuUuids: ${await described(ctx, refusals)}. ` +
      "Nothing was made and nothing charged. Run `pulumi up` again once cards are free, or add models to fallbackGpuUuids.",
  );
}

function pendingFirst(ctx: ProviderContext, inputs: InstanceInputs): string[] {
  const { records } = instanceRecovery(ctx.process);
  const models = modelsOf(inputs);
  const pending = models.find((model) => records.has(specOf({ ...inputs, gpuUuid: model }), inputs.title));
  return pending === undefined ? models : [pending, ...models.filter((model) => model !== pending)];
}

/**
 * Starts a stopped instance on its own model, or, when the cloud refuses that, on the next model of the
 * list it does not refuse (a start that names another model moves the instance to it). Without
 * fallbacks it is a plain start.
 */
export async function startOnFirstFreeModel(
  ctx: ProviderContext,
  cloud: CloudInstance,
  news: InstanceInputs,
  deadline: PowerDeadline,
): Promise<void> {
  const uuid = cloud.instance_uuid;
  if (news.fallbackGpuUuids === undefined) return changePower(ctx, uuid, "start", deadline);
  const own = cloud.gpu_uuid;
  const tries: { model: string; override?: StartupParams }[] = [
    { model: own ?? news.gpuUuid },
    ...modelsOf(news)
      .filter((model) => model !== own)
      .map((model) => ({ model, override: { gpu_uuid: model, gpu_nums: news.gpuNums } })),
  ];
  const refusals: Refusal[] = [];
  for (const { model, override } of tries) {
    if (refusals.length > 0)
      ctx.progress(`Starting instance ${uuid}: ${refusedSoFar(refusals)}; trying GPU model ${model}`);
    try {
      return await changePower(ctx, uuid, "start", deadline, override);
    } catch (err) {
      if (!isRefusal(err, [START_CALL])) throw err;
      refusals.push({ model, refusal: err });
    }
  }
  throw new Error(
    `Could not start instance ${uuid}: the cloud refused every GPU model of gpuUuid and fallbackGpuUuids: ` +
      `${await described(ctx, refusals)}. The instance stays stopped and nothing was charged. ` +
      "Run `pulumi up` again once cards are free, or add models to fallbackGpuUuids.",
  );
}

function refusedSoFar(refusals: readonly Refusal[]): string {
  return `the cloud refused GPU model ${refusals.map((r) => r.model).join(", then ")}`;
}

/** "4090D (gpu-1): no free cards; 5090 (gpu-2): ...", by the catalogue's names where it can be read. */
async function described(ctx: ProviderContext, refusals: readonly Refusal[]): Promise<string> {
  const names = new Map((await gpuCatalogue(ctx).catch(() => [])).map((gpu) => [gpu.gpu_uuid, gpu.gpu_name]));
  return refusals
    .map(({ model, refusal }) => {
      const name = names.get(model);
      return `${name === undefined ? model : `${name} (${model})`}: ${refusal.apiMessage ?? refusal.message}`;
    })
    .join("; ");
}
