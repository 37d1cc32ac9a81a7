import {
  ConnectionError,
  NotFoundError,
  RateLimitError,
  retryUntil,
  sleep,
  MAX_TIMER_MS,
  type RetryUntilOptions,
} from "pulumi-gpucloud/sdk";
import { FakeClock, settle } from "./fake-clock";

const where = { action: "list instances", method: "GET", path: "/instance/list" };
const unreachable = (): ConnectionError =>
  new ConnectionError({ ...where, message: "could not reach the API" });

/** Runs retryUntil on a fake clock, moving it until the loop ends; returns what it did, and when. */
async function run<T>(
  answers: (() => T)[],
  options: Omit<RetryUntilOptions, "clock">,
  clock = new FakeClock(0),
): Promise<{ result?: T; error?: unknown; attemptsAt: number[]; deadlines: number[] }> {
  const attemptsAt: number[] = [];
  const deadlines: number[] = [];
  let settled = false;
  const outcome: { result?: T; error?: unknown } = {};
  void retryUntil(
    async (call) => {
      attemptsAt.push(clock.now());
      deadlines.push(call.deadline);
      return answers[Math.min(attemptsAt.length - 1, answers.length - 1)]();
    },
    { ...options, clock },
  ).then(
    (result) => {
      outcome.result = result;
      settled = true;
    },
    (error: unknown) => {
      outcome.error = error;
      settled = true;
    },
  );
  while (!settled) await clock.advance(1);
  return { ...outcome, attemptsAt, deadlines };
}

describe("retryUntil, the one keep-trying-until-a-deadline loop", () => {
  it("tries again through transient failures, pausing longer each time, until one succeeds", async () => {
    const throwing = () => {
      throw unreachable();
    };
    const out = await run([throwing, throwing, throwing, () => "listed"], { deadline: 60_000, pauseMs: 100 });
    expect(out.result).toBe("listed");
    expect(out.attemptsAt).toEqual([0, 100, 250, 475]);
  });

  it("never pauses longer than maxPauseMs", async () => {
    const throwing = () => {
      throw unreachable();
    };
    const answers = [...Array.from({ length: 6 }, () => throwing), () => "ok"];
    const out = await run(answers, { deadline: 60_000, pauseMs: 100, maxPauseMs: 200 });
    const pauses = out.attemptsAt.slice(1).map((t, i) => t - out.attemptsAt[i]);
    expect(pauses).toEqual([100, 150, 200, 200, 200, 200]);
  });

  it("makes its last attempt at the deadline, then throws the last failure as it is", async () => {
    const last = unreachable();
    const out = await run(
      [
        () => {
          throw unreachable();
        },
        () => {
          throw last;
        },
      ],
      { deadline: 1000, pauseMs: 400, maxPauseMs: 400 },
    );
    expect(out.attemptsAt).toEqual([0, 400, 800, 1000]);
    expect(out.error).toBe(last);
  });

  it("stops at once on a failure that will not pass", async () => {
    const gone = new NotFoundError({ ...where, message: "instance not found" });
    const out = await run(
      [
        () => {
          throw unreachable();
        },
        () => {
          throw gone;
        },
      ],
      { deadline: 60_000, pauseMs: 10 },
    );
    expect(out.error).toBe(gone);
    expect(out.attemptsAt).toHaveLength(2);
  });

  it("stops at once on a rate limit whose Retry-After outlasts what the call may wait", async () => {
    const tooLong = new RateLimitError({ ...where, message: "asked to wait 60 min", tooLongToWait: true });
    const out = await run(
      [
        () => {
          throw tooLong;
        },
      ],
      { deadline: 60_000, pauseMs: 10 },
    );
    expect(out.error).toBe(tooLong);
    expect(out.attemptsAt).toEqual([0]);
  });

  it("takes its own idea of what may pass", async () => {
    const out = await run(
      [
        () => {
          throw new Error("not yet");
        },
        () => 7,
      ],
      { deadline: 60_000, pauseMs: 10, retryable: (err) => (err as Error).message === "not yet" },
    );
    expect(out.result).toBe(7);
  });

  it("gives every attempt the deadline, so the calls inside wait no longer than the loop", async () => {
    const out = await run(
      [
        () => {
          throw unreachable();
        },
        () => "ok",
      ],
      { deadline: 5000, pauseMs: 10 },
    );
    expect(out.deadlines).toEqual([5000, 5000]);
  });

  it("tells onRetry of every failure it will retry, and stops when aborted", async () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    const retried: unknown[] = [];
    const loop = retryUntil(
      async () => {
        throw unreachable();
      },
      { deadline: 60_000, pauseMs: 100, signal: controller.signal, onRetry: (e) => retried.push(e), clock },
    );
    await clock.advance(250);
    controller.abort(new Error("cancelled by the engine"));
    await expect(loop).rejects.toThrow("cancelled by the engine");
    expect(retried).toHaveLength(3);
  });
});

describe("sleep", () => {
  it("waits out a delay longer than a timer can hold instead of firing at once", async () => {
    const controller = new AbortController();
    let woke = false;
    const long = sleep(MAX_TIMER_MS + 1000, controller.signal).then(() => (woke = true));
    await sleep(30);
    await settle();
    expect(woke).toBe(false);
    controller.abort(new Error("stop"));
    await expect(long).rejects.toThrow("stop");
  });

  it("takes a negative or NaN delay as none", async () => {
    await expect(sleep(-5)).resolves.toBeUndefined();
    await expect(sleep(NaN)).resolves.toBeUndefined();
  });
});
