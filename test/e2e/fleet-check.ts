/**
 * The end-to-end check `npm run test:e2e` compiles and runs inside a user's project built from `npm pack`
 * (see dev/e2e.ts): the fleet example through pulumi-gpucloud/testing against the emulator, with the
 * project's own @pulumi/pulumi and its dynamic-provider server. Preview, up, drift made through the
 * emulator's admin API and the API, preview --refresh showing it, the repairing up, destroy; SSH passwords
 * secret in the outputs and sealed in the state file. Then the cost guard policy pack the package ships
 * (node_modules/pulumi-gpucloud/policy-pack, with the project's @pulumi/policy) against the same example,
 * through both front doors: over budget fails at preview with the total and the instances, within budget
 * passes, instances without an idle policy are reported, a catalogue that is down is a violation (with
 * --cost-guard: dev/e2e.ts asks for it on the oldest and the newest Node.js). Prints one line per step;
 * exits non-zero on a surprise.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { startEmulator } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import {
  costGuardPolicyPack,
  isSecret,
  nativeFrontDoor,
  OperationError,
  policyReport,
  secret,
  Stack,
  type FrontDoorFactory,
  type OperationResult,
} from "pulumi-gpucloud/testing";

const KEY = "demo-key";
const PASSPHRASE = "e2e passphrase";

function plan(result: OperationResult): string[] {
  return result.steps.map((s) => [s.name, s.op, ...s.changes.map((c) => c.name)].join(" ")).sort();
}

function report(step: string, result: OperationResult): void {
  process.stdout.write(`${step}: ${plan(result).join(", ")}\n`);
}

async function admin(url: string, method: string, route: string, body: unknown): Promise<void> {
  const answer = await fetch(`${url}/_emulator${route}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(answer.status, 200, `${method} /_emulator${route}`);
}

async function main(): Promise<void> {
  const emulator = await startEmulator({ port: 0, timeScale: 60, apiKeys: [KEY] });
  const api = new GpuCloudClient({ baseUrl: emulator.url, apiKey: KEY });
  const stateFile = path.join(__dirname, "..", "state", "fleet.json");
  const stack = await Stack.open({
    program: path.join(__dirname, "index.js"),
    project: "gpucloud-fleet",
    stack: "e2e",
    stateFile,
    passphrase: PASSPHRASE,
    config: {
      "gpucloud:baseUrl": emulator.url,
      "gpucloud:apiKey": secret(KEY),
      "gpucloud:pollIntervalMs": "50",
      "fleet:count": "2",
    },
  });
  try {
    const creates = ["fleet-0 create", "fleet-0-idle create", "fleet-1 create", "fleet-1-idle create"];
    const preview = await stack.preview();
    report("preview", preview);
    assert.deepEqual(plan(preview), creates);

    const up = await stack.up();
    report("up", up);
    assert.deepEqual(plan(up), creates);
    assert.ok(isSecret(up.outputs.sshEndpoints), "sshEndpoints is secret");
    const passwords = JSON.stringify(up.outputs.sshEndpoints).match(/"password":"([^"]+)"/g) ?? [];
    assert.ok(passwords.length > 0, "the fleet has SSH passwords");
    const state = fs.readFileSync(stateFile, "utf8");
    for (const password of passwords) assert.ok(!state.includes(password.split(":")[1]), "password sealed");
    assert.ok(!state.includes(KEY), "the API key is nowhere in the state");

    // Drift: the fleet is busy, then fleet-0 is renamed by hand and fleet-1 goes idle past its window.
    const ids = Object.fromEntries(stack.current.resources.map((r) => [r.name, r.id]));
    for (const name of ["fleet-0", "fleet-1"]) {
      await admin(emulator.url, "PUT", `/instances/${ids[name]}/utilization`, { gpu: 85, fb: 85 });
    }
    await api.instances.updateTitle(ids["fleet-0"], "renamed-by-hand");
    await admin(emulator.url, "PUT", `/instances/${ids["fleet-1"]}/utilization`, { gpu: 0, fb: 0 });
    await admin(emulator.url, "POST", "/clock/advance", { seconds: 31 * 60 });

    const drift = await stack.preview({ refresh: true });
    report("preview --refresh", drift);
    assert.deepEqual(plan(drift), [
      "fleet-0 update title",
      "fleet-0-idle same",
      "fleet-1 update running",
      "fleet-1-idle same",
    ]);

    await admin(emulator.url, "PUT", `/instances/${ids["fleet-1"]}/utilization`, { gpu: 85, fb: 85 });
    const repair = await stack.up({ refresh: true });
    report("repair (up --refresh)", repair);
    assert.deepEqual(
      plan(repair).filter((s) => !s.endsWith(" same")),
      ["fleet-0 update title", "fleet-1 update running"],
    );
    const settled = await stack.preview({ refresh: true });
    report("preview --refresh", settled);
    assert.ok(
      settled.steps.every((s) => s.op === "same"),
      "no drift after the repair",
    );

    const destroy = await stack.destroy();
    report("destroy", destroy);
    assert.deepEqual(stack.current.resources, []);
    assert.equal((await api.instances.list()).total, 0);

    if (process.argv.includes("--cost-guard")) {
      await costGuard(emulator.url, "dynamic providers");
      await costGuard(emulator.url, "native plugin", nativeFrontDoor());
      assert.equal((await api.instances.list()).total, 0);
    } else {
      process.stdout.write("cost guard: see the oldest and newest Node.js\n");
    }
  } finally {
    await stack.close();
    await api.close();
    await emulator.close();
  }
}

/** The cost guard against the fleet example through one front door; the cloud's catalogue is down last. */
async function costGuard(url: string, door: string, frontDoor?: FrontDoorFactory): Promise<void> {
  const config = {
    "gpucloud:baseUrl": url,
    "gpucloud:apiKey": secret(KEY),
    "gpucloud:pollIntervalMs": "50",
    "fleet:count": "2",
  };
  const stack = await Stack.open({
    program: path.join(__dirname, "index.js"),
    project: "gpucloud-fleet",
    stack: "cost-guard",
    config,
    frontDoor,
    policyPacks: [costGuardPolicyPack({ "gpucloud-stack-hourly-budget": { maxHourlyCost: 5 } })],
  });
  const failed = async (operation: Promise<unknown>) => {
    const err = await operation.then(
      () => assert.fail("the operation passed"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OperationError, String(err));
    return err;
  };
  try {
    const within = await stack.preview();
    assert.deepEqual(within.policyViolations, []);
    assert.deepEqual(within.outputs.hourlyPrice, {
      fleet: 4.16,
      perInstance: 2.08,
      currency: "CNY",
      basis: (within.outputs.hourlyPrice as { basis: string }).basis,
    });
    process.stdout.write(`cost guard (${door}): 2 instances, 4.16 CNY/h within 5 CNY/h: preview passes\n`);

    await stack.setConfig({ ...config, "fleet:count": "3" });
    const over = await failed(stack.preview());
    assert.match(over.message, /would cost 6\.24 CNY\/h, over maxHourlyCost 5 CNY\/h/);
    assert.match(over.message, /fleet-2: 2\.08 CNY\/h \(pod ComfyUI 0\.2 \+ 4090D 1\.88 × 1\)/);
    process.stdout.write(
      `cost guard (${door}): 3 instances fail the preview:\n${policyReport(over.policyViolations)}\n`,
    );

    await stack.setConfig({ ...config, "fleet:idlePolicy": "false" });
    const idle = await stack.preview();
    assert.deepEqual(
      idle.policyViolations.map((v) => `${v.policy} ${v.enforcementLevel} ${v.urn?.split("::").pop()}`),
      ["gpucloud-idle-shutdown advisory fleet-0", "gpucloud-idle-shutdown advisory fleet-1"],
    );
    process.stdout.write(`cost guard (${door}): instances without an idle policy reported (advisory)\n`);

    await stack.setConfig(config);
    // The program's catalogue lookups are cached in this process; the pack, started for each run, reads its own.
    await admin(url, "POST", "/faults", { path: "/gpu/list", kind: "http_503", count: 100 });
    const down = await failed(stack.preview()).finally(() => admin(url, "DELETE", "/faults", {}));
    assert.match(down.message, /Could not check the hourly budget: the cloud's price list could not be read/);
    process.stdout.write(`cost guard (${door}): a catalogue that is down fails the preview\n`);
  } finally {
    await stack.close();
  }
}

main().then(
  () => process.stdout.write(`fleet check passed on Node.js ${process.version}\n`),
  (err: unknown) => {
    process.stderr.write(`fleet check failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
