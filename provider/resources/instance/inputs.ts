/**
 * The inputs of Instance, as its reference page lists them: each described once with its rules (what a
 * change does, the rules it keeps with other inputs). Apart from the definition because the create and
 * update paths, the Fleet and the cost guard read them too.
 */
import { z } from "zod";
import { GPU_NUMS, TITLE_MAX } from "../../../sdk";
import { crossFieldRule, exactlyOneOf, isUnknown } from "../../framework/check";
import type { Inputs } from "../../framework/define-resource";
import { sameValue } from "../../framework/diff";
import { replacingInputs, withRules } from "../../framework/input-rules";
import { distinctModels, fallbackGpuUuidsInput } from "./gpu-choices";
import { isoTime, SHUTDOWN_LEAD_SECONDS } from "./timer";

const uuid = (what: string) =>
  z.string({ error: `must be a string (${what})` }).min(1, `must not be empty (${what})`);

/** The latest shutdownAt: 9999-12-31T23:59:59Z, the last time ISO 8601 writes with four year digits. */
const LATEST_UNIX_SECONDS = 253_402_300_799;
const notAShutdownTime = (issue: { input: unknown }) =>
  "must be Unix seconds (a positive whole number) or an ISO 8601 time with a zone, e.g. 2026-01-02T03:04:05Z, " +
  `got ${typeof issue.input === "string" ? JSON.stringify(issue.input) : String(issue.input)}` +
  (looksLikeMilliseconds(issue.input) ? " (milliseconds, it seems: divide by 1000)" : "");

/** JavaScript's Date.now() and getTime() count milliseconds: a value the cloud's seconds would read as that. */
function looksLikeMilliseconds(input: unknown): boolean {
  return typeof input === "number" && input > LATEST_UNIX_SECONDS && input / 1000 <= LATEST_UNIX_SECONDS;
}

/** shutdownAt: Unix seconds, or an ISO 8601 time with a zone; stored as Unix seconds. */
const shutdownAt = z
  .union(
    [
      z
        .number({ error: notAShutdownTime })
        .refine((n) => Number.isInteger(n) && n > 0 && n <= LATEST_UNIX_SECONDS, { error: notAShutdownTime })
        .meta({ type: "integer", minimum: 1, maximum: LATEST_UNIX_SECONDS }),
      z.iso.datetime({ offset: true, error: notAShutdownTime }),
    ],
    { error: notAShutdownTime },
  )
  .transform((v) => (typeof v === "number" ? v : Math.floor(Date.parse(v) / 1000)))
  .pipe(z.number().int());

/**
 * The inputs as the rules across them see them: declared on the inputs' own schemas, the rules cannot
 * name the type those schemas make.
 */
type Given = Record<string, unknown>;

const POD_TAG_NEEDS_POD = "podTag goes with podUuid; an instance created from imageUuid takes no podTag";
const podTagNeedsPod = crossFieldRule<Given>(POD_TAG_NEEDS_POD, (i) =>
  i.podTag !== undefined && !isUnknown(i.podTag) && i.imageUuid !== undefined && !isUnknown(i.imageUuid)
    ? [{ property: "podTag", reason: POD_TAG_NEEDS_POD }]
    : [],
);

const TIMER_NEEDS_RUNNING = "shutdownAt schedules the shutdown of a running instance; it needs running: true";
const timerNeedsRunning = crossFieldRule<Given>(TIMER_NEEDS_RUNNING, (i) =>
  i.shutdownAt !== undefined && i.running === false
    ? [{ property: "shutdownAt", reason: TIMER_NEEDS_RUNNING }]
    : [],
);

/**
 * Check has only this machine's clock; the cloud's clock and its 5-minute lead decide at apply time. A
 * time the state already holds passes: it was ahead when it was set, and once it has passed, a preview of
 * the unchanged program must not fail (an apply that would set it again is refused then, changing nothing).
 * Not with a replacement, though: its create would be refused after the engine may have deleted the old one.
 */
const timerInFuture = crossFieldRule<Given>(
  "a new or changed shutdownAt, or any shutdownAt of an instance being replaced, must be in the future by this " +
    `machine's clock; at apply time the cloud's clock decides, and wants it at least ${SHUTDOWN_LEAD_SECONDS / 60} minutes ahead`,
  (i, failed, olds) => {
    const now = Math.floor(Date.now() / 1000);
    if (typeof i.shutdownAt !== "number" || failed.has("shutdownAt")) return [];
    // A replacement creates a new instance, which sets the time anew: it must be ahead then too.
    const replaced = replacingInputs(InstanceInputs).some((name) => !sameValue(i[name], olds[name]));
    if (i.shutdownAt === olds.shutdownAt && !replaced) return [];
    return i.shutdownAt <= now
      ? [
          {
            property: "shutdownAt",
            reason:
              `shutdownAt must be in the future: ${isoTime(i.shutdownAt)} is not after now (${isoTime(now)} by this ` +
              `machine's clock; at apply time the cloud's clock decides and wants it at least ${SHUTDOWN_LEAD_SECONDS / 60} minutes ahead). ` +
              "Set a later time, or remove shutdownAt: a shutdown whose time has passed has nothing left to schedule.",
          },
        ]
      : [];
  },
);

/** Declared on both inputs: a Fleet's members, made of the same inputs, keep it too. */
const madeOfOne = exactlyOneOf<Given>(["podUuid", "imageUuid"], "create from a pod or from an image");

export const InstanceInputs = z.object({
  podUuid: withRules(
    uuid("a pod uuid from getPods")
      .optional()
      .describe("Create from this pod (application-market template)."),
    { replaces: true, checks: [madeOfOne] },
  ),
  podTag: withRules(
    uuid("a version tag of the pod")
      .optional()
      .describe("Pod version; the latest when absent. Only with podUuid."),
    {
      replaces: true,
      // An absent podTag means "the latest at creation", which a running instance already was: removing a
      // pin, or an import's podTag the program leaves out, must not replace a paid instance.
      keepWhenUnset: true,
      // Pinning the tag the instance already runs asks for nothing new: only another tag replaces it.
      sameAsOutput: "imageTag",
      checks: [podTagNeedsPod],
    },
  ),
  imageUuid: withRules(
    uuid("a personal or market image uuid").optional().describe("Create from this image instead of a pod."),
    { replaces: true, checks: [madeOfOne] },
  ),
  // The instance runs on one model of gpuUuid and fallbackGpuUuids: a list that still holds it asks for nothing new.
  gpuUuid: withRules(uuid("a GPU model uuid from getGpu").describe("GPU model."), {
    replaces: true,
    listsChoicesOf: "runningGpuUuid",
  }),
  fallbackGpuUuids: withRules(fallbackGpuUuidsInput, {
    replaces: true,
    listsChoicesOf: "runningGpuUuid",
    checks: [distinctModels],
  }),
  gpuNums: withRules(
    z
      .number({ error: `must be one of ${GPU_NUMS.join(", ")}` })
      .refine((n) => (GPU_NUMS as readonly number[]).includes(n), {
        error: (i) => `must be one of ${GPU_NUMS.join(", ")}, got ${String(i.input)}`,
      })
      .meta({ type: "integer", rule: `one of ${GPU_NUMS.join(", ")}` })
      .describe(`Number of GPUs: ${GPU_NUMS.join(", ")}.`),
    { replaces: true },
  ),
  title: z
    .string({ error: "must be a string" })
    .refine((t) => [...t].length <= TITLE_MAX, {
      error: (i) => `must be at most ${TITLE_MAX} characters, got ${[...String(i.input)].length}`,
    })
    // JSON Schema's maxLength counts characters (code points), as the refine does.
    .meta({ maxLength: TITLE_MAX })
    .optional()
    .describe(
      `Instance name, at most ${TITLE_MAX} characters: the owner's mark that tells this stack's instance from any other ` +
        "on the account. Left out, the provider names the instance `<resource name>-<7 random hex>` once and keeps that " +
        "name in the state (through the native plugin the suffix comes from the engine's seed, so a preview shows the " +
        "name the update writes; the dynamic providers get no seed, so a preview's name is only a stand-in). A mark " +
        "cleared in the console shows at refresh, and the next update writes it back. An empty title turns the mark " +
        "off: a lost create of the same spec, in any stack on the account, may then take the instance.",
    ),
  running: z.boolean({ error: "must be a boolean" }).default(true).describe("Desired power state."),
  shutdownAt: withRules(
    shutdownAt.optional().describe("Scheduled shutdown (Unix seconds or ISO 8601); absent means none."),
    { checks: [timerNeedsRunning, timerInFuture] },
  ),
  waitTimeoutSeconds: z
    .number({ error: "must be a number of seconds" })
    .int("must be a whole number of seconds from 1 to 9007199254740991")
    .positive("must be positive")
    .default(900)
    .describe(
      "How long each wait of create and power changes lasts, in seconds. A create whose answer was lost follows " +
        "an instance that appeared through its grace and claim even past this time, so that it is adopted rather " +
        "than left as a pending create.",
    ),
  waitForServices: z
    .boolean({ error: "must be a boolean" })
    .default(false)
    .describe(
      "Create and start-up (running false to true) also wait until every web (http) service in server_map " +
        "answers: any HTTP status below 500 counts, a 5xx or a failed connection does not. The wait lasts at " +
        "most waitTimeoutSeconds; a create whose services never answer fails and destroys the instance.",
    ),
  adoptInstanceUuid: withRules(
    uuid("an existing instance uuid")
      .optional()
      .describe("Adopt this existing instance instead of creating one."),
    { replaces: true, adoptsById: true },
  ),
});
export type InstanceInputs = Inputs<typeof InstanceInputs>;
