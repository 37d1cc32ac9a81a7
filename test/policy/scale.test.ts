/**
 * A stack of 1,000 instances, each with an idle policy, and a Fleet of 1,000 members (the most it takes),
 * through every policy of the cost guard: the answers are right at that size, and the time it takes is
 * reported (a figure, not an assertion).
 */
import * as pulumi from "@pulumi/pulumi";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { costGuardPolicies, stackHourlyBudget } from "../../provider/policy";
import { startNewRun } from "../../provider/policy/run";
import { reportFigure } from "../support/figures";
import { checkResource, checkStack, DYNAMIC, fleet, instance, resource, type Outcome } from "./stack-view";

const KEY = "scale-key";
const COUNT = 1000;

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, timeScale: 0, apiKeys: [KEY] });
  pulumi.runtime.setAllConfig({ "gpucloud:baseUrl": emulator.url, "gpucloud:apiKey": KEY }, [
    "gpucloud:apiKey",
  ]);
});
afterAll(() => emulator.close());

it(`checks a stack of ${COUNT} instances and their idle policies, and reports how long every policy took`, async () => {
  const instances = Array.from({ length: COUNT }, (_, i) =>
    instance(`fleet-${i}`, { instanceUuid: `uuid-${i}` }),
  );
  const policies = instances.map((_, i) =>
    resource(DYNAMIC, "IdleClosePolicy", `fleet-${i}-idle`, {
      instanceUuid: `uuid-${i}`,
      idlePeriodMinutes: 30,
    }),
  );
  const stack = [...instances, ...policies];
  // The price lists are read once per run; the first read is not what this measures.
  await checkStack(stackHourlyBudget, instances.slice(0, 1));

  const outcomes: Outcome[] = [];
  const timed = async (check: () => Promise<void>) => {
    const started = process.hrtime.bigint();
    await check();
    return (Number(process.hrtime.bigint() - started) / 1e6).toFixed(0);
  };
  const stackMs = await timed(async () => {
    for (const policy of costGuardPolicies.filter((p) => "validateStack" in p)) {
      outcomes.push(await checkStack(policy as StackValidationPolicy, stack));
    }
  });
  // The budget's look at each instance before an update counts them all into the run's running total.
  const resourceMs = await timed(async () => {
    for (const policy of costGuardPolicies.filter((p) => "validateResource" in p)) {
      for (const shown of stack)
        outcomes.push(await checkResource(policy as ResourceValidationPolicy, shown));
    }
  });
  reportFigure(
    "cost guard, 1,000 instances",
    `the stack policies ${stackMs} ms over ${COUNT} instances and ${COUNT} idle policies; ` +
      `the resource policies ${resourceMs} ms for all ${stack.length} resources, one by one`,
  );

  const reported = outcomes.flatMap((o) => o.violations.map((v) => v.message.split(",")[0]));
  // 1,000 × 2.08 CNY/h is over the default budget, and 1,000 GPUs over the default stack cap; before the
  // update the budget lets the first 24 instances through (49.92 CNY/h) and stops the 976 after; all else holds.
  expect(reported.slice(0, 2)).toEqual([
    "The stack's 1000 running instances would cost 2080 CNY/h",
    "The stack's 1000 running instances would have 1000 GPUs together",
  ]);
  expect(reported.slice(2)).toEqual(
    instances.slice(24).map((i) => `"${i.name}" would take the stack's hourly cost to 52 CNY/h`),
  );
  expect(outcomes.every((o) => o.cannotRun === undefined)).toBe(true);
});

it(`checks a Fleet of ${COUNT} declared stopped, each member looked up in the cloud, and reports how long it took`, async () => {
  // A run of its own: the running total starts from nothing.
  startNewRun();
  const parked = fleet("parked", COUNT, { running: false });
  const outcomes: Outcome[] = [];
  const started = process.hrtime.bigint();
  for (const policy of costGuardPolicies.filter((p) => "validateResource" in p)) {
    outcomes.push(await checkResource(policy as ResourceValidationPolicy, parked));
  }
  const ms = (Number(process.hrtime.bigint() - started) / 1e6).toFixed(0);
  reportFigure(
    `cost guard, a Fleet of ${COUNT}`,
    `the resource policies ${ms} ms for its ${COUNT} members, each looked up in the instance list`,
  );
  // None of them exists yet: each counts at its price, the fleet is stopped whole.
  expect(outcomes.flatMap((o) => o.violations.map((v) => v.message.split(",")[0]))).toEqual([
    'Fleet "parked" would take the stack\'s hourly cost to 2080 CNY/h',
  ]);
});
