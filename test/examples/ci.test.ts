/**
 * examples/ci/gpucloud.yml, followed step by step as GitHub Actions would run its emulator job (see
 * recipe.ts), for a pull request and for the daily schedule; the live job is checked for its guards only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ensurePackageLink, REPO_ROOT } from "../../dev/self-link";
import { compiledExample } from "./helpers";
import { Recipe } from "./recipe";

// js-yaml comes with @pulumi/pulumi (which reads Pulumi.yaml with it); no typings are installed for it.
const yaml = require("js-yaml") as { load(text: string): unknown };

interface WorkflowStep {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
}
interface Workflow {
  on: Record<string, unknown>;
  env: Record<string, string>;
  jobs: Record<string, { env?: Record<string, string>; steps: WorkflowStep[] }>;
}

const workflow = yaml.load(
  fs.readFileSync(path.join(REPO_ROOT, "examples", "ci", "gpucloud.yml"), "utf8"),
) as Workflow;

/** The step conditions this workflow uses: the event, and whether an env variable is set. */
function holds(condition: string | undefined, event: string, env: Record<string, string>): boolean {
  if (condition === undefined) return true;
  return condition.split("&&").every((part) => {
    const test = /^\s*(github\.event_name|env\.(\w+))\s*(==|!=)\s*'([^']*)'\s*$/.exec(part);
    if (!test) throw new Error(`the test cannot evaluate the step condition "${condition}"`);
    const value = test[1] === "github.event_name" ? event : (env[test[2]] ?? "");
    return (value === test[4]) === (test[3] === "==");
  });
}

/** `${{ github.workspace }}` and `${{ env.X }}` in a job's environment. */
function expand(value: string, workspace: string, env: Record<string, string>): string {
  return value
    .replace(/\$\{\{\s*github\.workspace\s*\}\}/g, workspace)
    .replace(/\$\{\{\s*env\.(\w+)\s*\}\}/g, (_, name: string) => env[name] ?? "");
}

/** Runs the emulator job's steps for `event`; `beforeStep` may act between steps (the clock moving on). */
async function runEmulatorJob(
  event: string,
  workspace: string,
  beforeStep?: (step: WorkflowStep, recipe: Recipe) => Promise<void>,
): Promise<Recipe> {
  const job = workflow.jobs.emulator;
  fs.mkdirSync(workspace, { recursive: true });
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...workflow.env, ...job.env })) {
    env[name] = expand(value, workspace, env);
  }
  const recipe = new Recipe({
    program: compiledExample("fleet"),
    project: "gpucloud-fleet",
    workDir: workspace,
    env,
    // The job's `npm ci`: the program and its dependencies are this repository's, installed already.
    install: async () => undefined,
  });
  try {
    for (const step of job.steps) {
      if (!holds(step.if, event, env) || step.run === undefined) continue;
      await beforeStep?.(step, recipe);
      await recipe.run(step.run);
    }
  } catch (err) {
    await recipe.close();
    throw err;
  }
  return recipe;
}

describe("examples/ci/gpucloud.yml", () => {
  let workspace: string;

  beforeAll(() => {
    ensurePackageLink();
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), "ci-workflow-"));
  });
  afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));

  it("runs on pull requests and on a schedule", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "schedule", "workflow_dispatch"]);
  });

  it("on a pull request, previews the fleet against the emulator it starts, under the cost guard", async () => {
    const recipe = await runEmulatorJob("pull_request", path.join(workspace, "pr"));
    try {
      const [preview] = recipe.ran.filter((r) => r.result);
      expect(preview.command).toBe(
        "pulumi preview --diff --policy-pack node_modules/pulumi-gpucloud/policy-pack --policy-pack-config cost-guard.json",
      );
      expect(preview.result!.steps.map((s) => s.op)).toEqual(Array(4).fill("create"));
      // The pack ran: the fleet's 4.16 CNY/h is within the job's 50, and each instance has an idle policy.
      expect(preview.result!.policyViolations).toEqual([]);
    } finally {
      await recipe.close();
    }
  });

  it("on the schedule, finds no drift even when the check runs long after up, and destroys the fleet", async () => {
    const recipe = await runEmulatorJob("schedule", path.join(workspace, "schedule"), async (step, r) => {
      // A CI runner may take its time between steps: 31 simulated minutes pass the 30-minute idle window.
      if (step.run?.includes("preview --refresh")) {
        const moved = await fetch(`${r.emulatorUrl}/_emulator/clock/advance`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ seconds: 31 * 60 }),
        });
        expect(moved.status).toBe(200);
      }
    });
    try {
      const operations = recipe.ran.filter((r) => r.result).map((r) => r.command);
      expect(operations).toEqual([
        "pulumi up --yes",
        "pulumi preview --refresh --expect-no-changes --diff",
        "pulumi destroy --yes",
      ]);
      expect(recipe.current.current.resources).toEqual([]);
      // The job's state backend is a file: its secrets are sealed with PULUMI_CONFIG_PASSPHRASE.
      const state = fs.readFileSync(
        path.join(workspace, "schedule", ".pulumi-state", "ci-emulator.json"),
        "utf8",
      );
      expect(JSON.parse(state).secretsProvider.type).toBe("passphrase");
    } finally {
      await recipe.close();
    }
  });

  it("checks the live cloud only when the GPUCLOUD_API_KEY secret is set", () => {
    const live = workflow.jobs.live.steps;
    const without = live.filter((s) => holds(s.if, "schedule", { GPUCLOUD_API_KEY: "" }));
    expect(without.map((s) => s.run)).toEqual([
      'echo "GPUCLOUD_API_KEY is not set; the live cloud is not checked."',
    ]);
    const withKey = live.filter((s) => holds(s.if, "schedule", { GPUCLOUD_API_KEY: "k" }) && s.run);
    expect(withKey.map((s) => s.run)).toEqual([
      "npm ci",
      'pulumi preview --stack "$STACK" --refresh --expect-no-changes --diff',
    ]);
  });
});
