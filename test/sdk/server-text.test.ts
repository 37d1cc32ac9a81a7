/**
 * The server's text in the client's messages: its msg and details, an engine's reason, an HTML page's
 * title, a run's status. A terminal obeys control characters, so a message that quoted them raw could
 * clear the screen or forge lines; every quote is escaped, and cut so that a server cannot fill a message.
 */
import {
  BusinessError,
  checkWorkflowInputs,
  CUT_MARK,
  EngineRejectionError,
  errorFromResponse,
  GpuCloudClient,
  GpuCloudError,
  terminalSafe,
  terminalSafeJson,
  TimeoutError,
} from "pulumi-gpucloud/sdk";
import { foreignServer, json, type ForeignServer } from "./foreign-server";
import { failure } from "./harness";
import { terminalControls } from "../support/terminal";

const CLEAR_SCREEN = "\x1b[2J\x1b[H";
const ctx = { action: "list instances", method: "GET", path: "/instance/list" };

describe("terminalSafe", () => {
  it("escapes control characters, the 8-bit CSI and the marks that reorder text, and keeps the rest", () => {
    expect(terminalSafe(`${CLEAR_SCREEN}No orphans.\n`)).toBe("\\x1b[2J\\x1b[HNo orphans.\\n");
    expect(terminalSafe("a\tb\rc\x07d\x7fe\u009b2Jf")).toBe("a\\tb\\rc\\x07d\\x7fe\\x9b2Jf");
    expect(terminalSafe("invoice\u202Efdp.exe\u2028x")).toBe("invoice\\u202efdp.exe\\u2028x");
    expect(terminalSafe("训练节点 🚀 café")).toBe("训练节点 🚀 café");
  });

  it("cuts at the length asked with a mark, never inside an escape or a character", () => {
    expect(terminalSafe("abcdef", 4)).toBe(`abcd${CUT_MARK}`);
    expect(terminalSafe("abcdef", 6)).toBe("abcdef");
    expect(terminalSafe("ab\x1bcdef", 4)).toBe(`ab${CUT_MARK}`);
    expect(terminalSafe("a🚀b", 2)).toBe(`a${CUT_MARK}`);
  });

  it("writes JSON that parses back to the same value, with nothing a terminal acts on", () => {
    const value = { title: `${CLEAR_SCREEN}x\u009b2J\u202e`, list: [1, "two"] };
    const shown = terminalSafeJson(value, 2);
    // Its line breaks are the indent's, between values.
    expect(terminalControls(shown)).toEqual([]);
    expect(shown.split("\n").length).toBeGreaterThan(3);
    expect(JSON.parse(shown)).toEqual(value);
  });
});

describe("the server's text in error messages", () => {
  it("escapes and cuts a msg and its details", () => {
    const msg = `${CLEAR_SCREEN}All good.\n${"x".repeat(5000)}`;
    const err = errorFromResponse({
      ...ctx,
      status: 400,
      body: { code: 1, msg, data: { details: "\x1b[31mred" } },
    });
    expect(err).toBeInstanceOf(BusinessError);
    expect(terminalControls(err.message, { lineBreaks: true })).toEqual([]);
    expect(err.message).toContain("the API refused it: \\x1b[2J\\x1b[HAll good.\\nxxx");
    expect(err.message).toContain(`x${CUT_MARK} (HTTP 400, code 1)`);
    expect(err.message.length).toBeLessThan(600);
    // The raw text stays on the error for programs that read it.
    expect(err.apiMessage).toBe(msg);
  });

  it("escapes an engine's reason, code and detail, and a field name", () => {
    const engine = errorFromResponse({
      ...ctx,
      status: 400,
      body: {
        code: 1,
        msg: "rejected",
        data: { error: { reason: "bad\x1b[2J", engine_code: "E\n1", detail: "\u009b1;1H" } },
      },
    });
    expect(engine).toBeInstanceOf(EngineRejectionError);
    expect(terminalControls(engine.message, { lineBreaks: true })).toEqual([]);
    expect(engine.message).toContain("bad\\x1b[2J [E\\n1] - \\x9b1;1H");
    const field = errorFromResponse({
      ...ctx,
      status: 400,
      body: { code: 400, message: "no", data: { error: "bad", field: "name\x1b[8m" } },
    });
    expect(field.message).toContain("(field name\\x1b[8m)");
  });

  it("escapes the title of an HTML page and the start of a text body", () => {
    const html = errorFromResponse({
      ...ctx,
      status: 200,
      body: undefined,
      text: `<html><head><title>Bad\x1b]0;owned\x07 Gateway</title></head></html>`,
    });
    expect(html.message).toContain('an HTML page ("Bad\\x1b]0;owned\\x07 Gateway")');
    const text = errorFromResponse({
      ...ctx,
      status: 200,
      body: undefined,
      text: `${CLEAR_SCREEN}maintenance`,
    });
    expect(text.message).toContain('text ("\\x1b[2J\\x1b[Hmaintenance")');
    expect(terminalControls(text.message, { lineBreaks: true })).toEqual([]);
  });

  it("takes an echoed API key out before cutting, so no part of it is left", () => {
    const secret = "sk-live-SECRET-0123456789";
    const err = errorFromResponse({
      ...ctx,
      status: 401,
      body: { code: 2, msg: `${"x".repeat(290)} key ${secret} is disabled` },
      secret,
    });
    expect(err.message).not.toContain("sk-live");
    expect(err.apiMessage).not.toContain(secret);
  });

  it("escapes a manifest's names and option values in an input check", () => {
    const { issues } = checkWorkflowInputs(
      [
        {
          name: `seed${CLEAR_SCREEN}`,
          value_type: "string",
          required: false,
          ui_schema: { control: "select", options: [{ label: "a", value: "\u009b2J" }] },
        },
        { name: "steps\x1b[31m", value_type: "int\n", required: true },
      ],
      { [`seed${CLEAR_SCREEN}`]: "other", stray: 1 },
    );
    const lines = issues.map((i) => `${i.field}: ${i.reason}`);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(terminalControls(line, { lineBreaks: true })).toEqual([]);
    const text = lines.join("\n");
    expect(text).toContain('must be one of the select options "\\x9b2J"');
    expect(text).toContain("declared: seed\\x1b[2J\\x1b[H, steps\\x1b[31m");
    expect(text).toContain("inputs.steps\\x1b[31m: is required by the workflow (value_type int\\n)");
  });
});

describe("the server's text through the client", () => {
  let server: ForeignServer;
  let client: GpuCloudClient;
  beforeAll(async () => {
    server = await foreignServer((req, res) => {
      if (req.url?.includes("/model-runs/list")) {
        const run = { run_id: "run-1", status: `queued${CLEAR_SCREEN}`, created_at: "2026-01-01 00:00:00" };
        json(res, 200, { code: 0, msg: "success", data: { total: 1, items: [run] } });
      } else {
        json(res, 200, { code: 1, msg: `${CLEAR_SCREEN}No orphans.` });
      }
    });
    client = new GpuCloudClient({ baseUrl: server.url, apiKey: "sk-text-test" });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it("escapes a refusal's msg", async () => {
    const err = await failure(client.instances.list());
    expect(err).toBeInstanceOf(BusinessError);
    expect(err.message).toContain("the API refused it: \\x1b[2J\\x1b[HNo orphans.");
    expect(terminalControls(err.message, { lineBreaks: true })).toEqual([]);
  });

  it("escapes the last state a wait saw", async () => {
    const err = await failure(client.modelRuns.waitForRun("run-1", { timeoutMs: 100, pollIntervalMs: 20 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).lastSeen).toBe("status queued\\x1b[2J\\x1b[H");
    expect(terminalControls(err.message, { lineBreaks: true })).toEqual([]);
    expect(err).toBeInstanceOf(GpuCloudError);
  });
});
