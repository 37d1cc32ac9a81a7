import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../../dev/self-link";

// js-yaml comes with @pulumi/pulumi (which reads Pulumi.yaml with it); no typings are installed for it.
const yaml = require("js-yaml") as { load(text: string): unknown };

interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: { run?: string; if?: string }[] }>;
}

describe("examples/ci", () => {
  const workflow = yaml.load(
    fs.readFileSync(path.join(REPO_ROOT, "examples", "ci", "gpucloud.yml"), "utf8"),
  ) as Workflow;
  const commands = (job: string) => workflow.jobs[job].steps.map((s) => s.run ?? "").join("\n");

  it("runs on pull requests and on a schedule", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "schedule", "workflow_dispatch"]);
  });

  it("previews against the emulator it starts, and checks for drift with preview --refresh", () => {
    expect(commands("emulator")).toContain("npx gpucloud-emulator");
    expect(commands("emulator")).toContain("pulumi preview --diff");
    expect(commands("emulator")).toContain("pulumi preview --refresh --expect-no-changes");
  });

  it("does the same against the live cloud only when the key is set", () => {
    expect(commands("live")).toContain("pulumi preview --stack");
    expect(commands("live")).toContain("--refresh --expect-no-changes");
    const pulumiSteps = workflow.jobs.live.steps.filter((s) => s.run?.startsWith("pulumi"));
    expect(pulumiSteps.every((s) => s.if?.includes("env.GPUCLOUD_API_KEY != ''"))).toBe(true);
  });
});
