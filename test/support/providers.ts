/**
 * The gpucloud providers as the engine runs them, through either front door: the dynamic providers (their
 * stored `__provider` texts and Pulumi's dynamic-provider server) or the package's native plugin.
 */
import { IdleClosePolicy, Instance, PersonalImage } from "pulumi-gpucloud";
import { gpucloudPlugin, nativeFrontDoor } from "../../testing/front-door";
import { assertBuilt, Harness, secret, serializedProvider, type Props } from "../harness";
import { DEMO_KEY } from "../emulator/helpers";

export type Kind = "Instance" | "IdleClosePolicy" | "PersonalImage";

/** How the engine reaches the provider: Pulumi's dynamic-provider server, or the package's native plugin. */
export type Door = "dynamic" | "native";

/** Both front doors, for `describe.each(DOORS)`. */
export const DOORS: readonly Door[] = ["dynamic", "native"];

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
  /** The front door (default: dynamic). */
  door?: Door;
  /** The stack config sent with Configure; none means no Configure call at all. */
  config?: Props;
  env?: NodeJS.ProcessEnv;
  /** The stored providers the dynamic door runs (default: those of this repository's resource classes). */
  providers?: Record<Kind, string>;
  /** The provider process's working directory, where the stored providers resolve their requires. */
  cwd?: string;
}

/** The gpucloud providers behind the chosen front door, driven like the engine drives them. */
export async function gpucloudHarness({
  door = "dynamic",
  ...options
}: ProviderServerOptions = {}): Promise<Harness> {
  if (door === "native") {
    // The plugin is the package's own build, dist/provider/native/main.js.
    assertBuilt();
    return Harness.start({ frontDoor: nativeFrontDoor(gpucloudPlugin()), module: "gpucloud", ...options });
  }
  return Harness.start({
    providers: await providerTexts(),
    module: "gpucloud",
    namesInInputs: true,
    ...options,
  });
}
