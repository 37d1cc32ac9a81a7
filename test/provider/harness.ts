/** The three gpucloud resources behind the lifecycle harness, with their real serialized providers. */
import { IdleClosePolicy, Instance, PersonalImage } from "pulumi-gpucloud";
import { Harness, serializedProvider, type Props } from "../harness";

export type Kind = "Instance" | "IdleClosePolicy" | "PersonalImage";

let captured: Promise<Record<Kind, string>> | undefined;

/** The `__provider` text each resource class stores in state (captured once under Pulumi's runtime mocks). */
export function providerTexts(): Promise<Record<Kind, string>> {
  captured ??= capture();
  return captured;
}

async function capture(): Promise<Record<Kind, string>> {
  return {
    Instance: await serializedProvider(() => new Instance("i", { podUuid: "p", gpuUuid: "g", gpuNums: 1 })),
    IdleClosePolicy: await serializedProvider(
      () => new IdleClosePolicy("p", { instanceUuid: "i", idlePeriodMinutes: 10 }),
    ),
    PersonalImage: await serializedProvider(() => new PersonalImage("m", { instanceUuid: "i" })),
  };
}

export interface GpucloudHarnessOptions {
  /** The stack config sent with Configure. */
  config?: Props;
  env?: NodeJS.ProcessEnv;
  /** The stored providers to run (default: those of this repository's resource classes). */
  providers?: Record<Kind, string>;
  /** The server's working directory, where the stored providers resolve their requires. */
  cwd?: string;
}

/** A dynamic-provider server running the gpucloud providers. */
export async function gpucloudHarness(options: GpucloudHarnessOptions = {}): Promise<Harness> {
  return Harness.start({ providers: await providerTexts(), module: "gpucloud", ...options });
}
