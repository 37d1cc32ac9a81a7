/**
 * What the provider says reaches a terminal (the Pulumi CLI prints it), and it quotes the cloud's titles,
 * names and addresses: a title holding ESC [2J would clear the screen, a right-to-left override would
 * show a name backwards. Every failure of an operation, every warning and every lookup error shows such
 * characters escaped; the provider's own words pass unchanged.
 */
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { AmbiguousMatchError, type Pod } from "../../provider/datasources";
import { pickPod } from "../../provider/datasources/pods";
import { runOperation } from "../../provider/framework/context";
import { ProcessMemory } from "../../provider/framework/process-memory";
import { DEMO_KEY } from "../emulator/helpers";

const HOSTILE = "lab\u001b[2J\u202eevil\u0085";
const SHOWN = "lab\\x1b[2J\\u202eevil\\x85";
/** A control character or a text-reordering mark, as a terminal would obey it. */
const rawControls = (text: string) =>
  [...text].filter((c) => {
    const code = c.codePointAt(0)!;
    return code < 0x20 || (code >= 0x7f && code <= 0x9f) || (code >= 0x202a && code <= 0x202e);
  });

describe("messages quote the cloud's text escaped", () => {
  let emu: RunningEmulator;
  const saved = { ...process.env };
  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
    process.env.GPUCLOUD_BASE_URL = emu.url;
    process.env.GPUCLOUD_API_KEY = DEMO_KEY;
  });
  afterAll(async () => {
    process.env = saved;
    await emu.close();
  });

  it("in the failure of an operation", async () => {
    const failure = await runOperation(async () => {
      throw new Error(`Could not title instance ins-1: it was titled "${HOSTILE}" first.`);
    }).catch((err: unknown) => err as Error);
    expect(failure.message).toBe(`Could not title instance ins-1: it was titled "${SHOWN}" first.`);
    expect(rawControls(failure.message)).toEqual([]);
  });

  it("and leaves the provider's own words as they are", async () => {
    const words =
      "Could not create instance: the operation was cancelled. Run `pulumi up` again (100 %, ×2).";
    const failure = await runOperation(async () => {
      throw new Error(words);
    }).catch((err: unknown) => err as Error);
    expect(failure.message).toBe(words);
  });

  it("in a warning", () => {
    const seen: string[] = [];
    const process = new ProcessMemory();
    process.routeWarnings((message) => seen.push(message));
    process.warn(`Instance ins-2 is not this stack's: it was titled ${HOSTILE}.`);
    expect(seen).toEqual([`Instance ins-2 is not this stack's: it was titled ${SHOWN}.`]);
  });

  it("in a lookup that finds two pods of one title", () => {
    const pod = (podUuid: string): Pod => ({
      podUuid,
      title: HOSTILE,
      remark: "",
      tags: ["1"],
      latestTag: "1",
      hourlyPrice: 0.1,
      currency: "CNY",
      price: { hour: 0.1, currency: "CNY" },
    });
    const choose = () => pickPod([pod("pod-a"), pod("pod-b")], { title: HOSTILE });
    expect(choose).toThrow(AmbiguousMatchError);
    expect(choose).toThrow(`getPod: 2 pods are titled "${SHOWN}"`);
    const message = (() => {
      try {
        choose();
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(rawControls(message!)).toEqual([]);
  });
});
