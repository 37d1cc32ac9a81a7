import * as pulumi from "@pulumi/pulumi";
import type { ManifestEntry, OutputEntry, WorkflowDetail } from "../../sdk";
import { connect, lift, withClient } from "./client";
import type { DataSourceOptions, InputArgs } from "./options";
import { cachedCatalogue } from "./catalogue-cache";
import { CURRENCY } from "./pricing";
import { withDefined } from "./shape";

/** A select control's choice; `value` keeps the JSON type the run must send back. */
export interface ParameterOption {
  /** What the control shows. */
  label: string;
  /** What a run sends. */
  value: string | number | boolean;
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

export interface GetWorkflowArgs {
  /** The id of a published workflow (yours, or a public one). */
  workflowId: string;
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
export async function getWorkflow(args: GetWorkflowArgs, opts?: DataSourceOptions): Promise<Workflow> {
  const workflowId = args.workflowId.trim();
  if (workflowId === "") {
    throw new RangeError("getWorkflow: workflowId is empty; pass the id of a published workflow.");
  }
  const connection = connect(opts);
  const raw = await cachedCatalogue(
    {
      baseUrl: connection.baseUrl,
      endpoint: "/workflow/market/info",
      filters: { workflow_id: workflowId },
      caller: connection.apiKey,
    },
    () => withClient(connection, (client) => client.workflows.info(workflowId)),
  );
  return toWorkflow(raw);
}

/** `getWorkflow` over Inputs. */
export function getWorkflowOutput(
  args: InputArgs<GetWorkflowArgs>,
  opts?: DataSourceOptions,
): pulumi.Output<Workflow> {
  return lift(getWorkflow, args, opts);
}

function toWorkflow(raw: WorkflowDetail): Workflow {
  return withDefined({
    workflowId: raw.workflow_id,
    revisionId: raw.revision_id,
    title: raw.title ?? "",
    description: raw.description ?? "",
    tags: (raw.tags ?? []).map(String),
    covers: (raw.covers ?? []).map(String),
    owner: { userId: raw.owner?.user_id ?? "", displayName: raw.owner?.display_name ?? "" },
    quoteAmount: raw.quote_amount === undefined ? undefined : Number(raw.quote_amount),
    quoteAmountText: raw.quote_amount,
    quoteCurrency: raw.quote_currency ?? CURRENCY,
    // gpu_model is 4080 when missing (docs/design/cloud-api.md#workflow-detail).
    gpuModel: raw.gpu_model ?? "4080",
    mayIncurExternalModelCost: raw.may_incur_external_model_cost ?? false,
    externalCostNotice: raw.external_cost_notice ?? "",
    parameters: [...raw.editable_parameter_manifest].sort(bySortOrder).map(toParameter),
    outputs: [...(raw.candidate_output_manifest ?? [])].sort(bySortOrder).map(toOutput),
  });
}

function toParameter(raw: ManifestEntry): WorkflowParameter {
  return withDefined({
    name: raw.name,
    displayName: raw.display_name ?? raw.name,
    description: raw.description ?? "",
    valueType: raw.value_type,
    required: raw.required ?? false,
    defaultValue: raw.default_value,
    control: raw.ui_schema?.control,
    options: raw.ui_schema?.options?.map((o) => ({ label: o.label ?? String(o.value), value: o.value })),
    sortOrder: raw.sort_order ?? 0,
  });
}

function toOutput(raw: OutputEntry): WorkflowOutput {
  return withDefined({
    name: raw.name,
    type: raw.type ?? "",
    description: raw.description ?? "",
    nodeId: raw.node_id ?? "",
    outputKey: raw.output_key ?? "",
    fileIndex: raw.file_index ?? 0,
    historyCount: raw.history_count ?? 0,
    sortOrder: raw.sort_order ?? 0,
  });
}

// A missing sort_order sorts first, like 0; Array.prototype.sort is stable, so ties keep manifest order.
function bySortOrder(a: { sort_order?: number }, b: { sort_order?: number }): number {
  return (a.sort_order ?? 0) - (b.sort_order ?? 0);
}
