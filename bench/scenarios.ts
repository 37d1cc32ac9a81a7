/** The measured scenarios: each run gets a fresh emulator and a fresh subject, so nothing carries over. */
import { BenchCloud, type InstanceSpec, type Pace } from "./cloud";
import { startSubject, type Deployed, type Subject, type SubjectName } from "./subjects";

export type ScenarioName = "create" | "refresh" | "preview" | "destroy";
export const SCENARIOS: ScenarioName[] = ["create", "refresh", "preview", "destroy"];

export const SCENARIO_TITLES: Record<ScenarioName, string> = {
  create: "create and wait for running",
  refresh: "refresh (read every instance)",
  preview: "preview, no change (check and diff)",
  destroy: "destroy and wait until gone",
};

/** One scenario run by one subject: the record bench/results.json keeps. */
export interface RunRecord {
  scenario: ScenarioName;
  n: number;
  rateLimit: number;
  subject: SubjectName;
  /** Requests that reached the API, refused ones included. */
  apiCalls: number;
  http429: number;
  wallMs: number;
  byEndpoint: Record<string, number>;
  /** Set when the subject failed the scenario; its figures are then not comparable. */
  error?: string;
}

function act(
  scenario: ScenarioName,
  subject: Subject,
  specs: InstanceSpec[],
  existing: Deployed[],
): Promise<unknown> {
  switch (scenario) {
    case "create":
      return subject.create(specs);
    case "refresh":
      return subject.refresh(existing);
    case "preview":
      return subject.preview(existing, specs);
    case "destroy":
      return subject.destroy(existing);
  }
}

export async function runScenario(
  scenario: ScenarioName,
  subjectName: SubjectName,
  n: number,
  rateLimit: number,
  pace: Pace,
): Promise<RunRecord> {
  const cloud = await BenchCloud.start(rateLimit, pace.timeScale);
  const subject = await startSubject(subjectName, cloud.url, pace.pollIntervalMs);
  try {
    const specs = cloud.specs(n);
    const existing = scenario === "create" ? [] : await subject.existing(cloud.seedRunning(specs), specs);
    await cloud.clearLog();
    const started = performance.now();
    let error: string | undefined;
    try {
      await act(scenario, subject, specs, existing);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const wallMs = Math.round((performance.now() - started) * 10) / 10;
    const counts = await cloud.counts();
    return { scenario, n, rateLimit, subject: subjectName, wallMs, ...counts, ...(error ? { error } : {}) };
  } finally {
    await subject.close();
    await cloud.close();
  }
}
