/** Found by the restart scenario: one failed poll used to end a wait, and with it the create it served. */
import { ConnectionError, NotFoundError, pollUntil, ServerError, TimeoutError } from "pulumi-gpucloud/sdk";

const where = { action: "wait for instance i", method: "GET", path: "/instance/info" };

function spec(answers: (() => number)[]) {
  let call = 0;
  return {
    ...where,
    description: "instance i to run",
    poll: async () => answers[Math.min(call++, answers.length - 1)](),
    describeState: (status: number) => `status ${status}`,
    isDone: (status: number) => status === 2,
  };
}

const unreachable = () => {
  throw new ConnectionError({ ...where, message: "could not reach the API" });
};

describe("a wait through transient failures", () => {
  it("keeps polling through an unreachable or failing service and returns once the state is reached", async () => {
    const overloaded = () => {
      throw new ServerError({ ...where, status: 503, message: "unavailable" });
    };
    await expect(
      pollUntil(spec([() => 1, unreachable, overloaded, unreachable, () => 2]), { pollIntervalMs: 1 }),
    ).resolves.toBe(2);
  });

  it("still stops at once on an answer that will not change, such as not found", async () => {
    const gone = () => {
      throw new NotFoundError({ ...where, status: 404, message: "instance not found" });
    };
    await expect(pollUntil(spec([() => 1, gone, () => 2]), { pollIntervalMs: 1 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("gives up at its deadline, saying what it last saw and that polls were failing", async () => {
    // The clock passes the deadline inside the failing poll: a loaded machine cannot end the wait before
    // that poll has run (a 40 ms deadline once did), so the failure is always what the wait saw last.
    const realNow = Date.now.bind(Date);
    let movedMs = 0;
    jest.spyOn(Date, "now").mockImplementation(() => realNow() + movedMs);
    const failsAfterTheDeadline = () => {
      movedMs = 60_000;
      return unreachable();
    };
    try {
      const result = pollUntil(spec([() => 1, failsAfterTheDeadline]), {
        pollIntervalMs: 5,
        timeoutMs: 30_000,
      });
      await expect(result).rejects.toBeInstanceOf(TimeoutError);
      await expect(result).rejects.toThrow(
        /timed out after 30 s .*; last seen: status 1, then a poll failed \(could not reach the API\)/,
      );
    } finally {
      jest.restoreAllMocks();
    }
  });
});
