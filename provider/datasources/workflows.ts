import { z } from "zod";
import type { ManifestEntry, OutputEntry, WorkflowDetail } from "../../sdk";
import { defineDataSource } from "../framework/define-data-source";
import type { Workflow, WorkflowOutput, WorkflowParameter } from "../generated/data-sources";
import { connect, withClient } from "./client";
import { cachedCatalogue } from "./catalogue-cache";
import { CURRENCY } from "./pricing";
import { withDefined } from "./shape";

const parameterOption = z
  .object({
    label: z.string().describe("What the control shows."),
    value: z.union([z.string(), z.number(), z.boolean()]).describe("What a run sends."),
  })
  .meta({
    id: "ParameterOption",
    description: "A select control's choice; `value` keeps the JSON type the run must send back.",
  });

const workflowParameter = z
  .object({
    name: z.string().describe("The key to use in a run's inputs."),
    displayName: z.string().describe("The name to show people (`name` when the cloud gives none)."),
    description: z.string().describe('What the input does ("" when the cloud says nothing).'),
    valueType: z
      .string()
      .describe(
        "`string`, `int`, `float`, `bool`, `image_input`, ... as the cloud reports it (authoritative).",
      ),
    required: z
      .boolean()
      .describe("The run fails when a required input is missing; defaults are not applied for you."),
    defaultValue: z
      .unknown()
      .optional()
      .describe("The value the cloud suggests, of `valueType`, when it names one."),
    control: z.string().optional().describe("`select` or `input`, when the cloud describes a control."),
    options: z
      .array(parameterOption)
      .optional()
      .describe("For `select` controls: the only values the input may take."),
    sortOrder: z.number().describe("Smaller first."),
  })
  .meta({
    id: "WorkflowParameter",
    description: "One input a run may (or must) set (an entry of the API's editable_parameter_manifest).",
  });

const workflowOutput = z
  .object({
    name: z.string().describe("The output's name."),
    type: z.string().describe("`image`, `video` or `audio`."),
    description: z.string().describe("What the output holds."),
    nodeId: z.string().describe("With `outputKey` and `fileIndex`, locates the output in a run's results."),
    outputKey: z.string().describe("See `nodeId`."),
    fileIndex: z.number().describe("See `nodeId`."),
    historyCount: z
      .number()
      .describe(
        "The cloud's `history_count` of the output, whose meaning the API does not publish; 0 when not reported.",
      ),
    sortOrder: z.number().describe("Smaller first."),
  })
  .meta({
    id: "WorkflowOutput",
    description: "One output a run can produce (an entry of the API's candidate_output_manifest).",
  });

const workflow = z
  .object({
    workflowId: z.string().describe("The workflow's id."),
    revisionId: z.string().describe("The current published revision; pin it in runs to lock the version."),
    title: z.string().describe("The workflow's title."),
    description: z.string().describe("What the workflow does."),
    tags: z.array(z.string()).describe("Its tags."),
    covers: z.array(z.string()).describe("Cover image addresses."),
    owner: z
      .object({
        userId: z.string().describe("The publisher's user id."),
        displayName: z.string().describe("The publisher's name to show people."),
      })
      .describe("Who published it."),
    quoteAmount: z
      .number()
      .optional()
      .describe("The estimated price per run as a number, when quoted; settlement is by real consumption."),
    quoteAmountText: z
      .string()
      .optional()
      .describe("The estimate exactly as the cloud wrote it (a decimal string), when quoted."),
    quoteCurrency: z.string().describe("Currently always CNY."),
    gpuModel: z
      .string()
      .describe("`4080`, `4090D` or `5090`; `4080` when the revision names none (the API's rule)."),
    mayIncurExternalModelCost: z.boolean().describe("When true, runs must accept the external cost risk."),
    externalCostNotice: z
      .string()
      .describe('The cloud\'s notice of that external cost ("" when it gives none).'),
    parameters: z
      .array(workflowParameter)
      .describe(
        "Inputs, smallest `sortOrder` first. Internal node bindings are left out: they are never sent.",
      ),
    outputs: z.array(workflowOutput).describe("Outputs, smallest `sortOrder` first."),
  })
  .meta({ id: "Workflow", description: "A published workflow's detail." });

export const getWorkflowSource = defineDataSource({
  name: "getWorkflow",
  description:
    "Reads a published workflow with its parameter and output manifests. A published revision does\n" +
    "not change under a running program, so each workflow is fetched once per run and API key (a\n" +
    "non-public workflow is visible to its owner only). A workflow that does\n" +
    "not exist, or is another user's non-public one, throws the SDK's `NotFoundError`.",
  example: [
    'const wf = await gpucloud.getWorkflow({ workflowId: "wf_text2img" });',
    "const required = wf.parameters.filter((p) => p.required).map((p) => p.name);",
  ].join("\n"),
  args: z.object({
    workflowId: z.string().describe("The id of a published workflow (yours, or a public one)."),
  }),
  result: workflow,
  async read(args, opts) {
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
  },
});

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
