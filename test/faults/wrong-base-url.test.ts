/**
 * A base URL that does not serve the API (a path typo such as `https://HOST/api/open`, or a proxy that
 * answers every path with an HTML 404): a refresh used to report every resource as deleted, so the state
 * dropped instances that kept billing and the next `up` created the fleet again. Now a refresh and a
 * destroy of a small stack fail with an error that names the URL and the setting, and nothing leaves the
 * state or the cloud. Through both front doors: the stack is made once, and each door's provider is then
 * run with the wrong URL against it.
 */
import type { Harness, ResourceState } from "../harness";
import { reportFigure } from "../support/figures";
import { DOORS, gpucloudHarness, providerConfig } from "../support/providers";
import { startWorld, type World } from "../support/world";
import { foreignServer, type ForeignServer } from "../sdk/foreign-server";
import { FAULT_EMULATOR } from "./schedule";

type Kind = "Instance" | "IdleClosePolicy" | "PersonalImage";

jest.setTimeout(180_000);

describe("a refresh and a destroy with a base URL that does not serve the API", () => {
  let w: World;
  let proxy: ForeignServer;
  let stack: [Kind, ResourceState][];
  beforeAll(async () => {
    w = await startWorld({ emulator: FAULT_EMULATOR });
    proxy = await foreignServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<html><body><h1>404 Not Found</h1><p>nginx</p></body></html>");
    });
    const instance = await w.advancing(
      w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, title: "kept" })),
    );
    const policy = await w.h.create(
      "IdleClosePolicy",
      await w.h.checked("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 30 }),
    );
    const image = await w.advancing(
      w.h.create("PersonalImage", await w.h.checked("PersonalImage", { instanceUuid: instance.id })),
    );
    stack = [
      ["Instance", instance],
      ["IdleClosePolicy", policy],
      ["PersonalImage", image],
    ];
  });
  afterAll(async () => {
    await proxy?.close();
    await w?.stop();
  });

  const wrongUrls: [string, () => string][] = [
    ["a path the emulator does not serve (a 404 without the API's envelope)", () => `${w.emu.url}/api/open`],
    ["a proxy answering every path with an HTML 404", () => proxy.url],
  ];
  const cases = DOORS.flatMap((door) => wrongUrls.map(([what, url]) => [door, what, url] as const));

  it.each(cases)(
    "through the %s door, drops nothing and names the URL, with %s",
    async (door, _case, wrongUrl) => {
      const url = wrongUrl();
      const wrong: Harness = await gpucloudHarness({ door, config: providerConfig(url) });
      const outcomes: string[] = [];
      try {
        for (const [kind, state] of stack) {
          for (const operation of [() => wrong.refresh(kind, state), () => wrong.delete(kind, state)]) {
            const result = await operation().then(
              (r) => (r && r.id === "" ? "dropped" : "succeeded"),
              (err: Error) => err.message,
            );
            outcomes.push(result);
          }
        }
      } finally {
        await wrong.stop();
      }
      const named = outcomes.filter(
        (m) =>
          m.includes(`The GPU cloud base URL ${url} does not serve the API`) &&
          m.includes("gpucloud:baseUrl") &&
          m.includes("GPUCLOUD_BASE_URL"),
      );
      const stillThere = await Promise.all(stack.map(([kind, state]) => w.h.refresh(kind, state)));
      reportFigure(
        "faults",
        `faults[wrong base url, ${door} door: ${_case}]: refreshes=${stack.length} destroys=${stack.length} ` +
          `failed naming the URL=${named.length}/${outcomes.length} dropped from state=${outcomes.filter((o) => o === "dropped").length} ` +
          `still in the cloud=${stillThere.filter((s, i) => s.id === stack[i][1].id).length}/${stack.length}`,
      );
      expect(named).toHaveLength(2 * stack.length);
      expect(stillThere.map((s) => s.id)).toEqual(stack.map(([, state]) => state.id));
    },
  );
});
