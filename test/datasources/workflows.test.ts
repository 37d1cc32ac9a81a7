import { NotFoundError } from "pulumi-gpucloud/sdk";
import { getWorkflow, getWorkflowOutput } from "../../provider/datasources";
import { requests, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const ALICE = "alice-key";
const STUDIO = "studio-key";
const emu = useDataSourceCloud([`alice:${ALICE}`, `studio:${STUDIO}`]);
const as = (apiKey: string) => ({ baseUrl: emu.url, apiKey });

describe("getWorkflow", () => {
  it("reads the current revision, its quote as a number and as written, and the GPU model", async () => {
    const workflow = await getWorkflow({ workflowId: "wf_portrait_studio" }, as(ALICE));
    expect(workflow).toMatchObject({
      workflowId: "wf_portrait_studio",
      revisionId: "rev_portrait_studio_2",
      title: "Portrait Studio",
      tags: ["image", "portrait"],
      owner: { userId: "gpucloud", displayName: "GPU Cloud Labs" },
      quoteAmount: 0.5,
      quoteAmountText: "0.50000000",
      quoteCurrency: "CNY",
      gpuModel: "4090D",
      mayIncurExternalModelCost: false,
    });
    expect(workflow.covers).toHaveLength(1);
  });

  it("returns the parameter manifest in sort order with required flags, defaults and select options", async () => {
    const { parameters } = await getWorkflow({ workflowId: "wf_portrait_studio" }, as(ALICE));
    expect(parameters.map((p) => p.sortOrder)).toEqual(
      [...parameters.map((p) => p.sortOrder)].sort((a, b) => a - b),
    );
    expect(parameters.filter((p) => p.required).map((p) => p.name)).toEqual(["prompt", "reference_image"]);
    expect(parameters.find((p) => p.name === "reference_image")).toMatchObject({
      valueType: "image_input",
      required: true,
    });
    expect(parameters.find((p) => p.name === "cfg_scale")).toMatchObject({
      valueType: "float",
      defaultValue: 7.5,
    });
    expect(parameters.find((p) => p.name === "batch_size")).toMatchObject({
      control: "select",
      options: [
        { label: "One", value: 1 },
        { label: "Two", value: 2 },
        { label: "Four", value: 4 },
      ],
    });
    expect(JSON.stringify(parameters)).not.toContain("bindings");
  });

  it("returns the output manifest and the external cost notice", async () => {
    const workflow = await getWorkflow({ workflowId: "wf_video_remix" }, as(ALICE));
    expect(workflow.mayIncurExternalModelCost).toBe(true);
    expect(workflow.externalCostNotice).not.toBe("");
    expect(workflow.outputs).toEqual([
      expect.objectContaining({
        name: "remix",
        type: "video",
        nodeId: "video_combine_1",
        outputKey: "videos",
        fileIndex: 0,
      }),
      expect.objectContaining({ name: "voice_over", type: "audio", sortOrder: 2 }),
    ]);
    expect(workflow.parameters.find((p) => p.name === "loop")?.options?.map((o) => o.value)).toEqual([
      true,
      false,
    ]);
  });

  it("shows a non-public workflow to its owner only", async () => {
    await expect(getWorkflow({ workflowId: "wf_team_sketch" }, as(STUDIO))).resolves.toMatchObject({
      title: "Team Sketch (private)",
    });
    await expect(getWorkflow({ workflowId: "wf_team_sketch" }, as(ALICE))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("throws NotFoundError for an unknown workflow, and tries again next time", async () => {
    await expect(getWorkflow({ workflowId: "wf_missing" }, as(ALICE))).rejects.toBeInstanceOf(NotFoundError);
    await expect(getWorkflow({ workflowId: "wf_missing" }, as(ALICE))).rejects.toBeInstanceOf(NotFoundError);
    expect(await requests(emu, "/workflow/market/info")).toHaveLength(2);
  });

  it("fetches each workflow once per API key, however often it is looked up", async () => {
    await Promise.all([
      getWorkflow({ workflowId: "wf_portrait_studio" }, as(ALICE)),
      getWorkflow({ workflowId: "wf_portrait_studio" }, as(ALICE)),
      resolveOutput(getWorkflowOutput({ workflowId: "wf_portrait_studio" }, as(ALICE))),
      getWorkflow({ workflowId: "wf_video_remix" }, as(ALICE)),
    ]);
    await getWorkflow({ workflowId: "wf_portrait_studio" }, as(ALICE));
    await getWorkflow({ workflowId: "wf_portrait_studio" }, as(STUDIO));
    expect(await requests(emu, "/workflow/market/info")).toHaveLength(3);
  });

  it("refuses an empty workflow id before calling the cloud", async () => {
    await expect(getWorkflow({ workflowId: " " }, as(ALICE))).rejects.toThrow(
      "getWorkflow: workflowId is empty",
    );
    expect(await requests(emu)).toHaveLength(0);
  });

  it("has an Output form that takes Inputs", async () => {
    const workflow = await resolveOutput(
      getWorkflowOutput({ workflowId: Promise.resolve("wf_video_remix") }, as(ALICE)),
    );
    expect(workflow.revisionId).toBe("rev_video_remix_3");
  });
});
