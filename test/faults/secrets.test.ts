/**
 * Scenario 6, secrets: after a full lifecycle of the three resources, everything Pulumi would store
 * (every input and output, `__provider` included), everything logged (the provider server's output, the
 * client's onRequest events, the emulator's request log and state dump) and every error of runs with a
 * wrong or disabled key must hold the API key nowhere, and the SSH password only in the secret output.
 * Through both front doors: the dynamic providers (their serialized code scanned too) and the native
 * plugin, which marks the SSH passwords secret itself.
 */
import { inspect } from "node:util";
import { GpuCloudClient, type RequestEvent } from "pulumi-gpucloud/sdk";
import { isSecret, reveal, type Harness, type Props, type ResourceState } from "../harness";
import { gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { advancing } from "../support/clock";
import { DOORS, gpucloudHarness, providerConfig, providerTexts } from "../support/providers";
import { seconds } from "./schedule";
import { reportFigure } from "../support/figures";

const GOOD_KEY = "sk-live-7f3a9c1e-good-4b2d";
const WRONG_KEY = "sk-live-7f3a9c1e-wrong-9e8d";
const DOOMED_KEY = "sk-live-7f3a9c1e-doomed-1a2b";

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/** Every way an error reaches a user or a log: its message, its string form, inspect (stack, cause) and JSON. */
function errorTexts(err: unknown): string[] {
  return [
    err instanceof Error ? err.message : "",
    String(err),
    inspect(err, { depth: 6 }),
    JSON.stringify(err) ?? "",
  ];
}

describe.each(DOORS)("secrets, through the %s door", (door) => {
  let emu: TestEmulator;
  let h: Harness;
  /** Everything scanned, by where it came from. */
  const corpus = new Map<string, string[]>();
  const keep = (where: string, value: unknown) =>
    corpus.set(where, [
      ...(corpus.get(where) ?? []),
      typeof value === "string" ? value : JSON.stringify(value),
    ]);

  beforeAll(async () => {
    emu = await startTestEmulator({ apiKeys: [`me:${GOOD_KEY}`, `me:${DOOMED_KEY}`], balance: 1_000_000 });
    if (door === "dynamic") {
      // The key is in the environment while the providers are serialized: none of it may be captured.
      process.env.GPUCLOUD_API_KEY = GOOD_KEY;
      try {
        Object.values(await providerTexts()).forEach((text) => keep("serialized providers", text));
      } finally {
        delete process.env.GPUCLOUD_API_KEY;
      }
    }
    h = await gpucloudHarness({ door, config: providerConfig(emu.url, GOOD_KEY) });
  });
  afterAll(async () => {
    await h?.stop();
    await emu?.close();
  });

  it("keeps the API key out of everything and the SSH password in the secret output only", async () => {
    const started = performance.now();
    const provider = door === "dynamic" ? await providerTexts() : undefined;
    /** A resource as the engine stores it: inputs and outputs, each with `__provider` when the door has one. */
    const store = (kind: "Instance" | "IdleClosePolicy" | "PersonalImage", state: ResourceState) => {
      const code = provider ? { __provider: provider[kind] } : {};
      keep("stored inputs", { ...state.inputs, ...code });
      const { sshPasswords, ...outputs } = state.outputs;
      keep("stored outputs", { ...outputs, ...code });
      if (sshPasswords === undefined) return;
      // The engine encrypts what the plugin marks secret; the dynamic door leaves that to the resource class.
      expect(isSecret(sshPasswords)).toBe(door === "native");
      keep("secret outputs", reveal(sshPasswords));
    };
    /** The cloud's own records (unredacted), the source of truth for what the SSH passwords are. */
    const instanceRecords = () =>
      emu.running.emulator.rooms.find((r) => r.name === "instances")!.snapshot() as {
        ssh: { password: string };
      }[];
    const cloudPasswords = new Set<string>();
    const notePasswords = () => instanceRecords().forEach((i) => cloudPasswords.add(i.ssh.password));
    const spec = {
      podUuid: (await pod(emu, "ComfyUI")).uuid,
      gpuUuid: await gpuUuid(emu, "4090D", GOOD_KEY),
      gpuNums: 1,
    };

    // The full lifecycle.
    let instance = await advancing(
      emu,
      h.create("Instance", await h.checked("Instance", { ...spec, title: "vault" })),
    );
    store("Instance", instance);
    notePasswords();
    store("Instance", await h.refresh("Instance", instance));
    for (const change of [{ title: "vault-2" }, { title: "vault-2", running: false }, { title: "vault-2" }]) {
      const news = await h.checked("Instance", { ...spec, ...change }, instance.inputs);
      keep("diffs", await h.diff("Instance", instance.id, instance.outputs, news));
      instance = await advancing(emu, h.update("Instance", instance, news));
      store("Instance", instance);
      notePasswords();
    }
    let policy = await h.create(
      "IdleClosePolicy",
      await h.checked("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 30 }),
    );
    store("IdleClosePolicy", policy);
    policy = await h.update("IdleClosePolicy", policy, { ...policy.inputs, idlePeriodMinutes: 60 });
    store("IdleClosePolicy", policy);
    store("IdleClosePolicy", await h.refresh("IdleClosePolicy", policy));
    const image = await advancing(
      emu,
      h.create("PersonalImage", await h.checked("PersonalImage", { instanceUuid: instance.id })),
    );
    store("PersonalImage", image);
    store("PersonalImage", await h.refresh("PersonalImage", image));
    await h.delete("PersonalImage", image);
    await h.delete("IdleClosePolicy", policy);
    await advancing(emu, h.delete("Instance", instance));

    expect(instanceRecords()).toEqual([]);

    // Runs with a wrong key and a disabled key: through the provider, and through the client directly.
    await emu.admin("POST", `/keys/${DOOMED_KEY}/disable`);
    const events: RequestEvent[] = [];
    for (const key of [WRONG_KEY, DOOMED_KEY]) {
      const bad = await gpucloudHarness({ door, config: providerConfig(emu.url, key) });
      const checkedSpec = await bad.checked("Instance", spec);
      // Each attempt's failure is taken as it happens: they run at once and may fail in any order.
      const outcomes = [
        bad.create("Instance", checkedSpec),
        bad.read("Instance", instance),
        bad.update("Instance", instance, { ...instance.inputs, title: "x" }),
        bad.delete("Instance", instance),
        bad.create("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 10 } as Props),
        bad.create("PersonalImage", { instanceUuid: instance.id, waitTimeoutSeconds: 60 } as Props),
      ].map((attempt: Promise<unknown>) =>
        attempt.then(
          () => new Error("a call with a bad key succeeded"),
          (e: unknown) => e,
        ),
      );
      for (const outcome of outcomes) {
        const err = await outcome;
        errorTexts(err).forEach((t) => keep("errors", t));
        expect(String(err)).toMatch(/authentication failed|API key/i);
      }
      await bad.stop();
      keep("provider server output", bad.stderr);
      const client = new GpuCloudClient({ baseUrl: emu.url, apiKey: key, onRequest: (e) => events.push(e) });
      for (const call of [
        () => client.instances.list(),
        () => client.instances.createByPod({ pod_uuid: spec.podUuid, gpu_uuid: spec.gpuUuid, gpu_nums: 1 }),
        () => client.account.balance(),
      ]) {
        errorTexts(
          await call().then(
            () => "",
            (e: unknown) => e,
          ),
        ).forEach((t) => keep("errors", t));
      }
      keep("client inspected", inspect(client, { depth: 4 }));
      await client.close();
    }
    const good = new GpuCloudClient({ baseUrl: emu.url, apiKey: GOOD_KEY, onRequest: (e) => events.push(e) });
    await good.instances.list();
    await good.account.balance();
    await good.instances
      .info("ins-missing")
      .catch((e: unknown) => errorTexts(e).forEach((t) => keep("errors", t)));
    keep("client inspected", inspect(good, { depth: 4 }));
    await good.close();
    events.forEach((e) => keep("onRequest events", e));
    keep("provider server output", h.stderr);
    keep("emulator request log", (await emu.admin("GET", "/requests")).body);
    keep("emulator state dump", (await emu.admin("GET", "/state")).body);

    const secretOutputs = (corpus.get("secret outputs") ?? []).join("\n");
    const sshPasswords = [...cloudPasswords];
    const inSecretOutputs = new Set(
      (corpus.get("secret outputs") ?? []).flatMap((t) =>
        Object.values(JSON.parse(t) as Record<string, string>),
      ),
    );
    const everywhereElse = [...corpus].filter(([where]) => where !== "secret outputs");
    const text = everywhereElse.map(([, texts]) => texts.join("\n")).join("\n");
    const keyHits = [GOOD_KEY, WRONG_KEY, DOOMED_KEY].map((k) => occurrences(text + secretOutputs, k));
    const passwordHits = Object.fromEntries(
      everywhereElse
        .map(
          ([where, texts]) =>
            [where, sshPasswords.reduce((n, p) => n + occurrences(texts.join("\n"), p), 0)] as const,
        )
        .filter(([, n]) => n > 0),
    );

    reportFigure(
      "faults",
      `faults[6 secrets, ${door} door]: scanned=${(text.length / 1024).toFixed(0)}KiB in ${everywhereElse.reduce((n, [, t]) => n + t.length, 0)} items ` +
        `(${everywhereElse.map(([where, t]) => `${where}=${t.length}`).join(", ")}) ` +
        `api-key-hits=${keyHits.reduce((a, b) => a + b, 0)} ssh-passwords=${sshPasswords.length} ` +
        `password-hits-outside-secret-outputs=${Object.values(passwordHits).reduce((a, b) => a + b, 0)} ` +
        `password-hits-in-secret-outputs=${sshPasswords.reduce((n, p) => n + occurrences(secretOutputs, p), 0)} ` +
        `in ${seconds(performance.now() - started)}`,
    );
    expect(keyHits).toEqual([0, 0, 0]);
    expect(sshPasswords.length).toBeGreaterThan(0);
    expect([...inSecretOutputs].sort()).toEqual([...sshPasswords].sort());
    expect(passwordHits).toEqual({});
  });
});
