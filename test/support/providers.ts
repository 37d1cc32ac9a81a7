/** The gpucloud providers as the engine runs them: their stored `__provider` texts, their config, their server. */
import { IdleClosePolicy, Instance, PersonalImage } from "pulumi-gpucloud";
import { Harness, secret, serializedProvider, type Props } from "../harness";
import { DEMO_KEY } from "../emulator/helpers";

export type Kind = "Instance" | "IdleClosePolicy" | "PersonalImage";

let captured: Promise<Record<Kind, string>> | undefined;

/** The `__provider` text each resource class stores in state, captured once under Pulumi's runtime mocks. */
export function providerTexts(): Promise<Record<Kind, string>> {
  captured ??= (async () => ({
    Instance: await serializedProvider(() => new Instance("i", { podUuid: "p", gpuUuid: "g", gpuNums: 1 })),
    IdleClosePolicy: await serializedProvider(
      () => new IdleClosePolicy("p", { instanceUuid: "i", idlePeriodMinutes: 10 }),
    ),
    PersonalImage: await serializedProvider(() => new PersonalImage("m", { instanceUuid: "i" })),
  }))();
  return captured;
}

/** Polls of the provider's waits: fast, since the frozen clock moves many simulated seconds per real millisecond. */
const POLL_MS = "10";

/** The stack config of a program using the emulator at `url` with `key`, plus `more` settings. */
export function providerConfig(url: string, key = DEMO_KEY, more: Props = {}): Props {
  return {
    "gpucloud:apiKey": secret(key),
    "gpucloud:baseUrl": url,
    "gpucloud:pollIntervalMs": POLL_MS,
    ...more,
  };
}

export interface ProviderServerOptions {
  /** The stack config sent with Configure; none means no Configure call at all. */
  config?: Props;
  env?: NodeJS.ProcessEnv;
  /** The stored providers to run (default: those of this repository's resource classes). */
  providers?: Record<Kind, string>;
  /** The server's working directory, where the stored providers resolve their requires. */
  cwd?: string;
}

/** A dynamic-provider server running the gpucloud providers, driven like the engine drives it. */
export async function gpucloudHarness(options: ProviderServerOptions = {}): Promise<Harness> {
  return Harness.start({ providers: await providerTexts(), module: "gpucloud", ...options });
}
