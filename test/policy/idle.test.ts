/**
 * The cost guard's idle rules: every running instance is stopped by an IdleClosePolicy or a shutdownAt,
 * linked as the engine shows a stack (by uuid once known, by the input's dependencies in a preview), and
 * no idle policy destroys its instance where the pack forbids it.
 */
import { idleShutdown, noDestroyOnIdle } from "../../provider/policy";
import { checkResource, checkStack, DYNAMIC, instance, NATIVE, resource, UNKNOWN } from "./stack-view";

const idle = (name: string, props: Record<string, unknown>, tokens = DYNAMIC, links = {}) =>
  resource(tokens, "IdleClosePolicy", name, { idlePeriodMinutes: 30, destroyOnIdle: false, ...props }, links);

const missing = (name: string) =>
  `"${name}" would run with no IdleClosePolicy and no shutdownAt: an idle instance bills by the hour until ` +
  "someone stops it. Add an IdleClosePolicy whose instanceUuid is this instance's, or set shutdownAt.";

describe("gpucloud-idle-shutdown", () => {
  it("is advisory by default", () => {
    expect(idleShutdown.enforcementLevel).toBe("advisory");
  });

  it("reports each running instance nothing stops, naming it and pointing at it", async () => {
    const watched = instance("watched", { instanceUuid: "uuid-w" }, NATIVE);
    const bare = instance("bare", { instanceUuid: "uuid-b" }, NATIVE);
    const stack = [watched, bare, idle("watched-idle", { instanceUuid: "uuid-w" }, NATIVE)];
    expect(await checkStack(idleShutdown, stack)).toEqual({
      violations: [{ message: missing("bare"), urn: bare.urn }],
    });
  });

  it("passes instances with a shutdownAt, and instances declared stopped", async () => {
    const timed = instance("timed", { shutdownAt: 1_900_000_000 });
    const stopped = instance("stopped", { running: false });
    expect(await checkStack(idleShutdown, [timed, stopped])).toEqual({ violations: [] });
  });

  it("links a policy to its instance in a preview, where the uuid is not known yet, by the input's dependencies", async () => {
    const fresh = instance("fresh");
    const other = instance("other");
    const policy = idle("fresh-idle", { instanceUuid: UNKNOWN }, DYNAMIC, {
      dependencies: [fresh],
      propertyDependencies: { instanceUuid: [fresh] },
    });
    expect(await checkStack(idleShutdown, [fresh, other, policy])).toEqual({
      violations: [{ message: missing("other"), urn: other.urn }],
    });
  });

  it("without property dependencies, takes a policy's one instance dependency as its instance", async () => {
    const fresh = instance("fresh");
    const policy = idle("fresh-idle", { instanceUuid: UNKNOWN }, DYNAMIC, { dependencies: [fresh] });
    expect(await checkStack(idleShutdown, [fresh, policy])).toEqual({ violations: [] });
  });

  it("cannot run while a policy's instance is not known at all, or an instance's power or shutdown may yet be set", async () => {
    const cannotRun = "string value at .instanceUuid can't be known during preview";
    const unlinked = idle("lost-idle", { instanceUuid: UNKNOWN });
    expect(await checkStack(idleShutdown, [instance("a"), unlinked])).toEqual({ violations: [], cannotRun });
    const maybe = instance("maybe", { running: UNKNOWN });
    expect((await checkStack(idleShutdown, [maybe])).cannotRun).toMatch(/at \.running can't be known/);
    const timed = instance("timed", { shutdownAt: UNKNOWN });
    expect((await checkStack(idleShutdown, [timed])).cannotRun).toMatch(/at \.shutdownAt can't be known/);
  });

  it("still reports what it knows when another instance is undecided", async () => {
    const bare = instance("bare");
    const outcome = await checkStack(idleShutdown, [bare, instance("maybe", { running: UNKNOWN })]);
    expect(outcome.violations).toEqual([{ message: missing("bare"), urn: bare.urn }]);
    expect(outcome.cannotRun).toMatch(/at \.running/);
  });
});

describe("gpucloud-no-destroy-on-idle", () => {
  it("is disabled unless the pack's config turns it on", () => {
    expect(noDestroyOnIdle.enforcementLevel).toBe("disabled");
  });

  it("reports an idle policy that destroys its instance, and passes one that stops it", async () => {
    const destroys = idle("fleet-0-idle", { instanceUuid: "u", destroyOnIdle: true }, NATIVE);
    expect(await checkResource(noDestroyOnIdle, destroys)).toEqual({
      violations: [
        {
          message:
            '"fleet-0-idle" destroys its instance when it goes idle (destroyOnIdle: true): the instance\'s disk and ' +
            "everything not saved as an image is lost. Set destroyOnIdle to false to stop the instance instead.",
        },
      ],
    });
    expect(await checkResource(noDestroyOnIdle, idle("keeps", { instanceUuid: "u" }))).toEqual({
      violations: [],
    });
    expect(
      (await checkResource(noDestroyOnIdle, idle("later", { destroyOnIdle: UNKNOWN }))).cannotRun,
    ).toMatch(/at \.destroyOnIdle/);
  });
});
