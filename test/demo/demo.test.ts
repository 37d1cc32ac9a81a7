import { isSecret, type OperationResult } from "../../testing";
import { outputLines, planLines, style } from "../../demo/render";
import { terminalControls } from "../support/terminal";
import {
  DEMO_DOORS,
  DemoError,
  demoOptionsFrom,
  DemoUsageError,
  expectPlan,
  runDemo,
  type DemoReport,
} from "../../demo/run";

function summary(report: DemoReport, step: keyof Omit<DemoReport, "durationMs">) {
  return Object.fromEntries(
    report[step].steps.map((s) => [s.name, [s.op, ...s.changes.map((c) => c.name)].join(" ")]),
  );
}

/** How each door keeps the fleet in the state, as the demo reports it after up. */
const STATE_LINE = {
  dynamic: "The state keeps 6 resources as pulumi-nodejs:dynamic/gpucloud:*, each with its provider's code.",
  native: "The state keeps 6 resources as gpucloud:index:*, with no provider code.",
};

describe.each(DEMO_DOORS)("npm run demo -- --door %s", (door) => {
  let report: DemoReport;
  let printed = "";

  beforeAll(async () => {
    report = await runDemo({ write: (text) => (printed += text), tty: false, door });
  });

  it("runs the fleet through the chosen front door, and the state shows it", () => {
    expect(printed).toContain(
      door === "native"
        ? "through the native plugin pulumi-resource-gpucloud."
        : "through Pulumi's dynamic-provider server.",
    );
    expect(printed).toContain(STATE_LINE[door]);
  });

  it("previews and creates three instances, each with its idle policy", () => {
    const creates = {
      "fleet-0": "create",
      "fleet-1": "create",
      "fleet-2": "create",
      "fleet-0-idle": "create",
      "fleet-1-idle": "create",
      "fleet-2-idle": "create",
    };
    expect(summary(report, "preview")).toEqual(creates);
    expect(summary(report, "up")).toEqual(creates);
  });

  it("finds exactly the two drifts on refresh: a title and an instance its idle policy shut down", () => {
    expect(summary(report, "refresh")).toEqual({
      "fleet-0": "update title",
      "fleet-1": "update running status statusName",
      "fleet-2": "same",
      "fleet-0-idle": "same",
      "fleet-1-idle": "same",
      "fleet-2-idle": "same",
    });
  });

  it("repairs both in place and destroys everything", () => {
    expect(summary(report, "repair")).toEqual({
      "fleet-0": "update title",
      "fleet-1": "update running",
      "fleet-2": "same",
      "fleet-0-idle": "same",
      "fleet-1-idle": "same",
      "fleet-2-idle": "same",
    });
    expect(Object.values(summary(report, "destroy"))).toEqual(Array(6).fill("delete"));
  });

  it("prints the plans with the SSH endpoints masked, and a one-line summary", () => {
    expect(isSecret(report.up.outputs.sshEndpoints)).toBe(true);
    expect(printed).toContain("sshEndpoints: [secret]");
    expect(printed).toContain("Every web UI answers (HTTP 200) as up returns");
    expect(printed).toContain(' ~ title: "fleet-0" => "renamed-by-hand"');
    expect(printed).toContain("~ running: true => false");
    expect(printed).toMatch(
      /Demo passed: 6 resources created, 2 drifts found and repaired, 6 resources destroyed, in \d+\.\ds\./,
    );
    const passwords = JSON.stringify(report.up.outputs.sshEndpoints).match(/"password":"([^"]+)"/g) ?? [];
    expect(passwords.length).toBeGreaterThan(0);
    for (const p of passwords) expect(printed).not.toContain(p.split(":")[1]);
  });

  it("fails a step whose plan differs from the expected one, naming what differs", () => {
    const inSync = Object.fromEntries(report.refresh.steps.map((s) => [s.name, { op: "same" as const }]));
    expect(() => expectPlan(report.refresh, inSync)).toThrow(DemoError);
    expect(() => expectPlan(report.refresh, inSync)).toThrow(
      "The refresh did not go as expected: fleet-0: update instead of same; fleet-1: update instead of same.",
    );
  });
});

describe("npm run demo's command line", () => {
  it("runs through the dynamic door unless --door says native", () => {
    expect(demoOptionsFrom([])).toEqual({ door: "dynamic" });
    expect(demoOptionsFrom(["--door", "native"])).toEqual({ door: "native" });
    expect(demoOptionsFrom(["--door=dynamic"])).toEqual({ door: "dynamic" });
  });

  it("refuses an unknown door or flag, naming it and the choices", () => {
    expect(() => demoOptionsFrom(["--door", "grpc"])).toThrow(DemoUsageError);
    expect(() => demoOptionsFrom(["--door", "grpc"])).toThrow(
      /^--door must be dynamic or native, not "grpc": .*Usage: npm run demo \[-- --door dynamic\|native\]$/,
    );
    expect(() => demoOptionsFrom(["--doors", "native"])).toThrow(
      /Unknown option '--doors'.*Usage: npm run demo/,
    );
    expect(() => demoOptionsFrom(["--door"])).toThrow(/--door.*argument missing.*Usage: npm run demo/);
  });
});

describe("what the demo prints of the cloud", () => {
  const title = "\x1b[2J\x1b[HDemo passed\u009b2J\u202e";

  it("shows a title in a plan and in the outputs escaped, never obeyed by the terminal", () => {
    const result: OperationResult = {
      operation: "up",
      durationMs: 1,
      outputs: { titles: { "fleet-0": title }, serviceUrls: { [`ComfyUI${title}`]: ["http://x"] } },
      steps: [
        {
          op: "update",
          urn: "urn:pulumi:demo::fleet::gpucloud:index:Instance::fleet-0",
          type: "gpucloud:index:Instance",
          name: "fleet-0",
          changes: [{ name: "title", old: title, new: "fleet-0", secret: false, replaces: false }],
        },
      ],
      policyViolations: [],
    };
    const printed = [...planLines(result, style(false)), ...outputLines(result.outputs)];
    expect(terminalControls(printed.join("\n"))).toEqual([]);
    expect(printed).toContain(
      '       ~ title: "\\u001b[2J\\u001b[HDemo passed\\u009b2J\\u202e" => "fleet-0"',
    );
    expect(printed).toContain('        fleet-0: "\\u001b[2J\\u001b[HDemo passed\\u009b2J\\u202e"');
    expect(printed.some((line) => line.includes("ComfyUI\\x1b[2J\\x1b[HDemo passed\\x9b2J\\u202e: ["))).toBe(
      true,
    );
  });
});
