// Generated from the data source definitions (provider/datasources) by `npm run build`; edit those, not this.
import type * as pulumi from "@pulumi/pulumi";
import { callDataSource, dataSourceOutput } from "../datasources/call";
import type { DataSourceOptions, InputArgs } from "../datasources/options";

/** A GPU model of the catalogue. */
export interface GpuModel {
  /** Id to pass as an Instance's `gpuUuid`. */
  gpuUuid: string;
  /** Model name, e.g. `4090D`. */
  gpuName: string;
  /** 1 valid (rentable), 0 invalid. */
  status: number;
  /** True when `status` is 1. */
  valid: boolean;
  /** Price per GPU per hour, in `currency`. */
  hourlyPrice: number;
  /** The currency of the prices: always `CNY`. */
  currency: "CNY";
  /** Every listed price per GPU. */
  price: Price;
}

/** A catalogue price (of a GPU model or a pod). `hour` is always present; the others when the cloud lists them. */
export interface Price {
  /** Price per hour. */
  hour: number;
  /** Price per day, when listed. */
  day?: number;
  /** Price per week, when listed. */
  week?: number;
  /** Price per month, when listed. */
  month?: number;
  /** Price per year, when listed. */
  year?: number;
  /** The currency of the prices: always `CNY`. */
  currency: "CNY";
}

/** A pod, an application-market template instances are created from. */
export interface Pod {
  /** Id to pass as an Instance's `podUuid`. */
  podUuid: string;
  /** The pod's title, as `getPod` matches it. */
  title: string;
  /** The pod's description in the catalogue. */
  remark: string;
  /** Every version tag, in the order the catalogue lists them. */
  tags: string[];
  /** The tag an instance gets when it is created without `podTag`; absent when the pod lists no tag. */
  latestTag?: string;
  /** Price per hour, in `currency`, before GPUs; absent when the catalogue lists no price. */
  hourlyPrice?: number;
  /** The currency of the prices: always `CNY`. */
  currency: "CNY";
  /** Every listed price; absent when the catalogue lists none. */
  price?: Price;
}

/** A pod picked by `getPod`, with the tag that was asked for (or the latest). */
export interface SelectedPod {
  /** The requested tag when one was given, else `latestTag`. */
  tag?: string;
  /** Id to pass as an Instance's `podUuid`. */
  podUuid: string;
  /** The pod's title, as `getPod` matches it. */
  title: string;
  /** The pod's description in the catalogue. */
  remark: string;
  /** Every version tag, in the order the catalogue lists them. */
  tags: string[];
  /** The tag an instance gets when it is created without `podTag`; absent when the pod lists no tag. */
  latestTag?: string;
  /** Price per hour, in `currency`, before GPUs; absent when the catalogue lists no price. */
  hourlyPrice?: number;
  /** The currency of the prices: always `CNY`. */
  currency: "CNY";
  /** Every listed price; absent when the catalogue lists none. */
  price?: Price;
}

/** A public market image. */
export interface MarketImage {
  /** Id to pass as an Instance's `imageUuid`. */
  imageUuid: string;
  /** The software it ships, by version. */
  components: ImageComponents;
  /** Image size in bytes, when listed. */
  sizeBytes?: number;
  /** Unix seconds, when listed. */
  createdAt?: number;
  /** Unix seconds, when listed. */
  updatedAt?: number;
}

/** Versions of the software a market image ships; a component the image lacks is an empty string. */
export interface ImageComponents {
  /** CUDA version, e.g. `12.4`. */
  cuda: string;
  /** PaddlePaddle version. */
  paddlePaddle: string;
  /** PyTorch version. */
  pyTorch: string;
  /** Python version, e.g. `3.11`. */
  python: string;
  /** TensorFlow version. */
  tensorFlow: string;
  /** Ubuntu version. */
  ubuntu: string;
}

/** One of the caller's own saved images. */
export interface PersonalImageSummary {
  /** Id to pass as an Instance's `imageUuid` or a PersonalImage's adopted id. */
  imageUuid: string;
  /** The image's title. */
  title: string;
  /** The image's remark. */
  remark: string;
  /** How many layers the image has, when listed. */
  layerCount?: number;
  /** Size in GB, when listed. */
  sizeGb?: number;
  /** The pod the image was saved from ("" when not listed). */
  podUuid: string;
  /** The version of that pod ("" when not listed). */
  podTag: string;
  /** 1 uploading, 2 saved, 3 failed. */
  saveImageStatus?: number;
  /** `saveImageStatus` by name: `uploading`, `saved`, `failed`, or `unknown` when not listed. */
  saveImageStatusName: "uploading" | "saved" | "failed" | "unknown";
  /** Unix seconds, when listed. */
  createTime?: number;
}

/** One of the caller's instances as /instance/list reports it. */
export interface InstanceSummary {
  /** The instance's uuid. */
  instanceUuid: string;
  /** Numeric status (2 running, 4 stopped, ...; see statusName). */
  status: number;
  /** The status by name: `running`, `stopped`, ... */
  statusName: string;
  /** "" when the instance has no title. */
  title: string;
  /** Unix seconds, when reported. */
  createTime?: number;
  /** Unix seconds, when reported. */
  startTime?: number;
  /** Addresses of its web services. */
  serverUrls: string[];
  /** Its exposed services. */
  services: InstanceService[];
  /** GPU model uuid, when reported. */
  gpuUuid?: string;
  /** GPU model name, when reported. */
  gpuName?: string;
  /** Number of GPUs, when reported. */
  gpuNums?: number;
  /** The uuid of the image (or pod) it was created from, when reported. */
  imageUuid?: string;
  /** Image name, when reported. */
  imageName?: string;
  /** Image version tag, when reported. */
  imageTag?: string;
  /** Billing type; the API does not publish the meaning of its values. */
  chargingType?: number;
  /** Scheduled shutdown, when the cloud reports one. */
  shutdownRegular?: {
    /** Whether it is set. */
    enable: boolean;
    /** When, Unix seconds. */
    shutdownTime: number;
  };
  /** The idle-close rule, when the cloud reports one (the emulator does; the API does not document it). */
  idleClose?: {
    /** How long every GPU must stay idle, in minutes. */
    idlePeriodMinutes: number;
    /** Whether the instance is destroyed, not only shut down. */
    destroy: boolean;
    /** GPU utilisation threshold in percent (0: the platform's). */
    gpuThreshold: number;
    /** Video-memory utilisation threshold in percent (0: the platform's). */
    memoryThreshold: number;
  };
  /** 1 uploading, 2 saved, 3 failed, when an image was saved from the instance. */
  saveImageStatus?: number;
}

/** An exposed service of an instance (an entry of its server_map). The SSH password is left out on
purpose: a data source result is not a secret, so it would land in plain text wherever the program
exports it. Read it from the Instance resource's `sshPasswords` output, which is a secret. */
export interface InstanceService {
  /** The service's title. */
  title: string;
  /** The service's address. */
  url: string;
  /** `http` or `ssh`. */
  portType: string;
  /** `tcp` or `udp`. */
  protocol: string;
  /** How to reach an `ssh` service; absent for others. */
  ssh?: {
    /** SSH host. */
    host: string;
    /** SSH port. */
    port: number;
    /** SSH user; the password is in the Instance resource's secret sshPasswords. */
    username: string;
  };
}

/** The caller's account balance. */
export interface Balance {
  /** Cash balance. */
  balance: number;
  /** Card (voucher) balance. */
  cardBalance: number;
  /** The currency of both balances: always `CNY`. */
  currency: "CNY";
}

/** A published workflow's detail. */
export interface Workflow {
  /** The workflow's id. */
  workflowId: string;
  /** The current published revision; pin it in runs to lock the version. */
  revisionId: string;
  /** The workflow's title. */
  title: string;
  /** What the workflow does. */
  description: string;
  /** Its tags. */
  tags: string[];
  /** Cover image addresses. */
  covers: string[];
  /** Who published it. */
  owner: {
    /** The publisher's user id. */
    userId: string;
    /** The publisher's name to show people. */
    displayName: string;
  };
  /** The estimated price per run as a number, when quoted; settlement is by real consumption. */
  quoteAmount?: number;
  /** The estimate exactly as the cloud wrote it (a decimal string), when quoted. */
  quoteAmountText?: string;
  /** Currently always CNY. */
  quoteCurrency: string;
  /** `4080`, `4090D` or `5090`; `4080` when the revision names none (the API's rule). */
  gpuModel: string;
  /** When true, runs must accept the external cost risk. */
  mayIncurExternalModelCost: boolean;
  /** The cloud's notice of that external cost ("" when it gives none). */
  externalCostNotice: string;
  /** Inputs, smallest `sortOrder` first. Internal node bindings are left out: they are never sent. */
  parameters: WorkflowParameter[];
  /** Outputs, smallest `sortOrder` first. */
  outputs: WorkflowOutput[];
}

/** One input a run may (or must) set (an entry of the API's editable_parameter_manifest). */
export interface WorkflowParameter {
  /** The key to use in a run's inputs. */
  name: string;
  /** The name to show people (`name` when the cloud gives none). */
  displayName: string;
  /** What the input does ("" when the cloud says nothing). */
  description: string;
  /** `string`, `int`, `float`, `bool`, `image_input`, ... as the cloud reports it (authoritative). */
  valueType: string;
  /** The run fails when a required input is missing; defaults are not applied for you. */
  required: boolean;
  /** The value the cloud suggests, of `valueType`, when it names one. */
  defaultValue?: unknown;
  /** `select` or `input`, when the cloud describes a control. */
  control?: string;
  /** For `select` controls: the only values the input may take. */
  options?: ParameterOption[];
  /** Smaller first. */
  sortOrder: number;
}

/** A select control's choice; `value` keeps the JSON type the run must send back. */
export interface ParameterOption {
  /** What the control shows. */
  label: string;
  /** What a run sends. */
  value: string | number | boolean;
}

/** One output a run can produce (an entry of the API's candidate_output_manifest). */
export interface WorkflowOutput {
  /** The output's name. */
  name: string;
  /** `image`, `video` or `audio`. */
  type: string;
  /** What the output holds. */
  description: string;
  /** With `outputKey` and `fileIndex`, locates the output in a run's results. */
  nodeId: string;
  /** See `nodeId`. */
  outputKey: string;
  /** See `nodeId`. */
  fileIndex: number;
  /** The cloud's `history_count` of the output, whose meaning the API does not publish; 0 when not reported. */
  historyCount: number;
  /** Smaller first. */
  sortOrder: number;
}

/** The arguments of {@link getGpus}. */
export interface GetGpusArgs {
  /** Also return invalid models (status 0). @defaultValue false */
  includeInvalid?: boolean;
}

/** What {@link getGpus} returns. */
export interface GetGpusResult {
  /** The models in catalogue order. */
  gpus: GpuModel[];
}

/** The arguments of {@link getGpu}. */
export interface GetGpuArgs {
  /** Model name, e.g. `"4090D"`; matched without regard to case (see `getGpu`). */
  name: string;
  /** Also consider invalid models (status 0). @defaultValue false */
  includeInvalid?: boolean;
}

/** The arguments of {@link getPods}. */
export interface GetPodsArgs {
  /** Fuzzy name filter, applied by the cloud (the `name` query of /pod/list). */
  name?: string;
}

/** What {@link getPods} returns. */
export interface GetPodsResult {
  /** The pods in catalogue order. */
  pods: Pod[];
}

/** The arguments of {@link getPod}. */
export interface GetPodArgs {
  /** The pod's exact title. */
  title: string;
  /** A version tag the pod must offer; by default the latest tag is reported. */
  tag?: string;
}

/** The arguments of {@link getMarketImages}. */
export interface GetMarketImagesArgs {
  /** Only images with this CUDA version (the `cuda_version` query, matched by the cloud). */
  cudaVersion?: string;
  /** Only images with this Python version (the `python_version` query, matched by the cloud). */
  pythonVersion?: string;
}

/** What {@link getMarketImages} returns. */
export interface GetMarketImagesResult {
  /** The matching images, in the order the cloud lists them. */
  images: MarketImage[];
}

/** What {@link getPersonalImages} returns. */
export interface GetPersonalImagesResult {
  /** Every personal image of the caller. */
  images: PersonalImageSummary[];
}

/** What {@link getInstances} returns. */
export interface GetInstancesResult {
  /** Every instance of the caller. */
  instances: InstanceSummary[];
}

/** The arguments of {@link getWorkflow}. */
export interface GetWorkflowArgs {
  /** The id of a published workflow (yours, or a public one). */
  workflowId: string;
}

/**
 * Lists the GPU models of the catalogue, valid ones only unless `includeInvalid` is set.
 *
 * @example
 * const { gpus } = await gpucloud.getGpus();
 * for (const gpu of gpus) console.log(gpu.gpuName, gpu.hourlyPrice, gpu.currency);
 */
export function getGpus(args: GetGpusArgs = {}, opts?: DataSourceOptions): Promise<GetGpusResult> {
  return callDataSource("getGpus", args, opts) as Promise<GetGpusResult>;
}

/** `getGpus` over Inputs. */
export function getGpusOutput(
  args: InputArgs<GetGpusArgs> = {},
  opts?: DataSourceOptions,
): pulumi.Output<GetGpusResult> {
  return dataSourceOutput("getGpus", args, opts) as pulumi.Output<GetGpusResult>;
}

/**
 * Finds one GPU model by name. An exact match, ignoring case, wins. Failing that, the name may
 * match whole words of a longer model name (`"4090D"` finds `"RTX 4090D"`), but never part of a
 * word: `"4090"` does not find `"4090D"`, a different card at a different price. Throws
 * `NoMatchError` or `AmbiguousMatchError`, listing the models that exist.
 *
 * @example
 * const gpu = await gpucloud.getGpu({ name: "4090D" });
 * const pod = await gpucloud.getPod({ title: "ComfyUI" });
 * new gpucloud.Instance("worker", { podUuid: pod.podUuid, gpuUuid: gpu.gpuUuid, gpuNums: 1 });
 */
export function getGpu(args: GetGpuArgs, opts?: DataSourceOptions): Promise<GpuModel> {
  return callDataSource("getGpu", args, opts) as Promise<GpuModel>;
}

/** `getGpu` over Inputs. */
export function getGpuOutput(
  args: InputArgs<GetGpuArgs>,
  opts?: DataSourceOptions,
): pulumi.Output<GpuModel> {
  return dataSourceOutput("getGpu", args, opts) as pulumi.Output<GpuModel>;
}

/**
 * Lists pods, every page of them, optionally filtered by the cloud's fuzzy `name` match. The pod
 * list is public: an API key is sent when one is configured but none is needed.
 *
 * @example
 * const { pods } = await gpucloud.getPods({ name: "comfy" });
 */
export function getPods(args: GetPodsArgs = {}, opts?: DataSourceOptions): Promise<GetPodsResult> {
  return callDataSource("getPods", args, opts) as Promise<GetPodsResult>;
}

/** `getPods` over Inputs. */
export function getPodsOutput(
  args: InputArgs<GetPodsArgs> = {},
  opts?: DataSourceOptions,
): pulumi.Output<GetPodsResult> {
  return dataSourceOutput("getPods", args, opts) as pulumi.Output<GetPodsResult>;
}

/**
 * Finds one pod by its exact title and, when `tag` is given, checks that the pod offers it. Throws
 * `NoMatchError` (listing the titles or tags that exist) or `AmbiguousMatchError` (several pods share
 * the title). The lookup reads the whole pod catalogue once per run, whatever the number of lookups.
 *
 * @example
 * const pod = await gpucloud.getPod({ title: "ComfyUI", tag: "v1.2.5" });
 * const gpu = await gpucloud.getGpu({ name: "4090D" });
 * new gpucloud.Instance("worker", {
 *   podUuid: pod.podUuid,
 *   podTag: pod.tag,
 *   gpuUuid: gpu.gpuUuid,
 *   gpuNums: 1,
 * });
 */
export function getPod(args: GetPodArgs, opts?: DataSourceOptions): Promise<SelectedPod> {
  return callDataSource("getPod", args, opts) as Promise<SelectedPod>;
}

/** `getPod` over Inputs. */
export function getPodOutput(
  args: InputArgs<GetPodArgs>,
  opts?: DataSourceOptions,
): pulumi.Output<SelectedPod> {
  return dataSourceOutput("getPod", args, opts) as pulumi.Output<SelectedPod>;
}

/**
 * Lists public market images, every page, optionally filtered by CUDA and Python version. The
 * market image list is public: an API key is sent when one is configured but none is needed.
 *
 * @example
 * const { images } = await gpucloud.getMarketImages({ cudaVersion: "12.4", pythonVersion: "3.11" });
 */
export function getMarketImages(args: GetMarketImagesArgs = {}, opts?: DataSourceOptions): Promise<GetMarketImagesResult> {
  return callDataSource("getMarketImages", args, opts) as Promise<GetMarketImagesResult>;
}

/** `getMarketImages` over Inputs. */
export function getMarketImagesOutput(
  args: InputArgs<GetMarketImagesArgs> = {},
  opts?: DataSourceOptions,
): pulumi.Output<GetMarketImagesResult> {
  return dataSourceOutput("getMarketImages", args, opts) as pulumi.Output<GetMarketImagesResult>;
}

/**
 * Lists the caller's personal images. Never cached: a program may save images while it runs, and
 * each call reads the cloud afresh.
 *
 * @example
 * const { images } = await gpucloud.getPersonalImages();
 * const saved = images.filter((i) => i.saveImageStatus === 2);
 */
export function getPersonalImages(opts?: DataSourceOptions): Promise<GetPersonalImagesResult> {
  return callDataSource("getPersonalImages", {}, opts) as Promise<GetPersonalImagesResult>;
}

/** `getPersonalImages` as an Output. */
export function getPersonalImagesOutput(
  opts?: DataSourceOptions,
): pulumi.Output<GetPersonalImagesResult> {
  return dataSourceOutput("getPersonalImages", {}, opts) as pulumi.Output<GetPersonalImagesResult>;
}

/**
 * Lists every instance of the caller, walking every page. Never cached: the program's own
 * resources create and destroy instances while it runs, so each call reads the cloud afresh.
 *
 * @example
 * const { instances } = await gpucloud.getInstances();
 * const running = instances.filter((i) => i.statusName === "running").length;
 */
export function getInstances(opts?: DataSourceOptions): Promise<GetInstancesResult> {
  return callDataSource("getInstances", {}, opts) as Promise<GetInstancesResult>;
}

/** `getInstances` as an Output. */
export function getInstancesOutput(
  opts?: DataSourceOptions,
): pulumi.Output<GetInstancesResult> {
  return dataSourceOutput("getInstances", {}, opts) as pulumi.Output<GetInstancesResult>;
}

/**
 * Reads the caller's balance. Never cached: instances and runs the program starts spend it.
 *
 * @example
 * const { balance, currency } = await gpucloud.getBalance();
 */
export function getBalance(opts?: DataSourceOptions): Promise<Balance> {
  return callDataSource("getBalance", {}, opts) as Promise<Balance>;
}

/** `getBalance` as an Output. */
export function getBalanceOutput(
  opts?: DataSourceOptions,
): pulumi.Output<Balance> {
  return dataSourceOutput("getBalance", {}, opts) as pulumi.Output<Balance>;
}

/**
 * Reads a published workflow with its parameter and output manifests. A published revision does
 * not change under a running program, so each workflow is fetched once per run and API key (a
 * non-public workflow is visible to its owner only). A workflow that does
 * not exist, or is another user's non-public one, throws the SDK's `NotFoundError`.
 *
 * @example
 * const wf = await gpucloud.getWorkflow({ workflowId: "wf_text2img" });
 * const required = wf.parameters.filter((p) => p.required).map((p) => p.name);
 */
export function getWorkflow(args: GetWorkflowArgs, opts?: DataSourceOptions): Promise<Workflow> {
  return callDataSource("getWorkflow", args, opts) as Promise<Workflow>;
}

/** `getWorkflow` over Inputs. */
export function getWorkflowOutput(
  args: InputArgs<GetWorkflowArgs>,
  opts?: DataSourceOptions,
): pulumi.Output<Workflow> {
  return dataSourceOutput("getWorkflow", args, opts) as pulumi.Output<Workflow>;
}
