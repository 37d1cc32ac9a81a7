/**
 * The two subjects the scenarios drive, each over N instances at once (the Pulumi engine's default
 * parallelism is unbounded). "gpucloud" is this provider's implementation called in this process: the
 * very object the state shim requires (`pulumi-gpucloud/dynamic`), without the gRPC hop of the
 * dynamic-provider server. "baseline" is bench/baseline.ts.
 */
import type * as pulumi from "@pulumi/pulumi";
import { providers } from "../provider/dynamic";
import { BaselineProvider } from "./baseline";
import { BENCH_KEY, type InstanceSpec } from "./cloud";

export type SubjectName = "gpucloud" | "baseline";
export const SUBJECTS: SubjectName[] = ["gpucloud", "baseline"];

/** A resource as the state holds it. */
export interface Deployed {
  id: string;
  props: Record<string, unknown>;
}

export interface Subject {
  /** State for instances that already exist in the cloud (seeded, so not measured). */
  existing(ids: string[], specs: InstanceSpec[]): Promise<Deployed[]>;
  /** Create every instance and wait until each runs. */
  create(specs: InstanceSpec[]): Promise<Deployed[]>;
  /** Read every instance; fails unless every one is still there. */
  refresh(deployed: Deployed[]): Promise<void>;
  /** Check and diff every instance against an unchanged program; fails on any change. */
  preview(deployed: Deployed[], specs: InstanceSpec[]): Promise<void>;
  /** Delete every instance and wait until each is gone. */
  destroy(deployed: Deployed[]): Promise<void>;
  close(): Promise<void>;
}

const instance = providers.Instance;

function fail(what: string, details: string[]): never {
  throw new Error(`${what}: ${details.slice(0, 3).join("; ")}${details.length > 3 ? "; ..." : ""}`);
}

class GpucloudSubject implements Subject {
  static async start(baseUrl: string, pollIntervalMs: number): Promise<GpucloudSubject> {
    const config: Record<string, string> = {
      "gpucloud:apiKey": BENCH_KEY,
      "gpucloud:baseUrl": baseUrl,
      "gpucloud:pollIntervalMs": String(pollIntervalMs),
    };
    await instance.configure({
      config: { get: (key: string) => config[key] },
    } as pulumi.dynamic.ConfigureRequest);
    return new GpucloudSubject();
  }

  async existing(ids: string[], specs: InstanceSpec[]): Promise<Deployed[]> {
    return Promise.all(ids.map(async (id, i) => ({ id, props: await this.checked(specs[i]) })));
  }

  async create(specs: InstanceSpec[]): Promise<Deployed[]> {
    return Promise.all(
      specs.map(async (spec) => {
        const created = await instance.create(await this.checked(spec));
        return { id: created.id, props: created.outs ?? {} };
      }),
    );
  }

  async refresh(deployed: Deployed[]): Promise<void> {
    const read = await Promise.all(deployed.map((d) => instance.read(d.id, d.props)));
    const lost = deployed.filter((d, i) => read[i].id !== d.id).map((d) => d.id);
    if (lost.length > 0) fail(`refresh reported ${lost.length} live instances as gone`, lost);
  }

  async preview(deployed: Deployed[], specs: InstanceSpec[]): Promise<void> {
    const diffs = await Promise.all(
      deployed.map(async (d, i) => instance.diff(d.id, d.props, await this.checked(specs[i], d.props))),
    );
    const changed = deployed.filter((_, i) => diffs[i].changes).map((d) => d.id);
    if (changed.length > 0) fail(`preview of an unchanged program shows ${changed.length} changes`, changed);
  }

  async destroy(deployed: Deployed[]): Promise<void> {
    await Promise.all(deployed.map((d) => instance.delete(d.id, d.props)));
  }

  async close(): Promise<void> {}

  private async checked(
    spec: InstanceSpec,
    olds: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const { inputs, failures } = await instance.check(olds, { ...spec });
    if (failures && failures.length > 0)
      fail(
        "check refused the inputs",
        failures.map((f) => f.reason),
      );
    return inputs;
  }
}

class BaselineSubject implements Subject {
  private readonly provider: BaselineProvider;

  constructor(baseUrl: string, pollIntervalMs: number) {
    this.provider = new BaselineProvider(baseUrl, BENCH_KEY, pollIntervalMs);
  }

  async existing(ids: string[], specs: InstanceSpec[]): Promise<Deployed[]> {
    return ids.map((id, i) => ({ id, props: { ...specs[i] } }));
  }

  async create(specs: InstanceSpec[]): Promise<Deployed[]> {
    return Promise.all(
      specs.map(async (spec) => {
        const state = await this.provider.create(this.checked({ ...spec }));
        return { id: state.id, props: { ...state.inputs, ...state.outputs } };
      }),
    );
  }

  async refresh(deployed: Deployed[]): Promise<void> {
    const read = await Promise.all(deployed.map((d) => this.provider.read(d.id)));
    const lost = deployed.filter((_, i) => read[i] === undefined).map((d) => d.id);
    if (lost.length > 0) fail(`refresh reported ${lost.length} live instances as gone`, lost);
  }

  async preview(deployed: Deployed[], specs: InstanceSpec[]): Promise<void> {
    const changed = deployed
      .filter((d, i) => this.provider.diff(this.checked(d.props), this.checked({ ...specs[i] })).changes)
      .map((d) => d.id);
    if (changed.length > 0) fail(`preview of an unchanged program shows ${changed.length} changes`, changed);
  }

  async destroy(deployed: Deployed[]): Promise<void> {
    await Promise.all(deployed.map((d) => this.provider.delete(d.id)));
  }

  close(): Promise<void> {
    return this.provider.close();
  }

  private checked(inputs: Record<string, unknown>) {
    const { inputs: checked, failures } = this.provider.check(inputs);
    if (failures.length > 0) fail("check refused the inputs", failures);
    return checked;
  }
}

export async function startSubject(
  name: SubjectName,
  baseUrl: string,
  pollIntervalMs: number,
): Promise<Subject> {
  return name === "gpucloud"
    ? GpucloudSubject.start(baseUrl, pollIntervalMs)
    : new BaselineSubject(baseUrl, pollIntervalMs);
}
