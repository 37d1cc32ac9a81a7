/**
 * Scenario 5, bad input, property-based (fast-check, fixed seeds):
 * - check of the three resources over 10,500 generated inputs (valid, invalid and preview-unknown values
 *   per field, plus stray fields): it never throws, makes no API call, and every field drawn invalid is
 *   named by a failure whose reason starts with that field; a sample also goes through the real server.
 * - 10,000 malformed requests to the emulator (bad JSON, wrong types, huge values, unknown fields, bad
 *   multipart, wrong methods, odd headers and queries): every answer is the envelope, never a 500, and the
 *   emulator still answers afterwards.
 * - crafted input of the kinds a hostile review found (prototype keys, crafted separators, slow bodies,
 *   rotating made-up keys, oversized stored inputs, corrupt state files) against an emulator with a
 *   state file: no crash, no 5xx, and every acknowledged change is still there after a restart.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { Emulator, MAX_STORED_INPUT_BYTES } from "pulumi-gpucloud/emulator";
import { Pool } from "undici";
import { providers } from "../../provider/dynamic";
import { UNKNOWN, type Harness } from "../harness";
import {
  createInstance,
  DEMO_KEY,
  startTestEmulator,
  type TestEmulator,
  untilClosed,
} from "../emulator/helpers";
import { gpucloudHarness, providerConfig, type Kind } from "../support/providers";
import { bounded, seconds } from "./schedule";
import { reportFigure } from "../support/figures";

const RUNS_PER_RESOURCE = 3500;
const SERVER_SAMPLE = 300;
const MALFORMED_REQUESTS = 10_000;
/** Thousands of real requests: on a loaded 2-core machine they can outlast jest's default 30 s. */
const VOLUME_TIMEOUT_MS = 120_000;

type Field = { valid: fc.Arbitrary<unknown>; invalid: fc.Arbitrary<unknown>; required?: boolean };

const nonEmpty = fc.string({ minLength: 1, maxLength: 40 });
const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const uuidField = (required = false): Field => ({
  valid: nonEmpty,
  invalid: fc.oneof(fc.constant(""), notAString),
  required,
});
const notANumber = fc.oneof(fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null), fc.constant({}));
const oneOf = (allowed: number[]): Field => ({
  valid: fc.constantFrom(...allowed),
  invalid: fc.oneof(
    fc.integer().filter((n) => !allowed.includes(n)),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !allowed.includes(n)),
    notANumber,
  ),
  required: true,
});
const positiveInt: Field = {
  valid: fc.integer({ min: 1, max: 100_000 }),
  invalid: fc.oneof(
    fc.integer({ max: 0 }),
    fc.double({ min: 0.01, max: 1000, noNaN: true }).filter((n) => !Number.isInteger(n)),
    notANumber,
  ),
};
const bool: Field = {
  valid: fc.boolean(),
  invalid: fc.oneof(fc.constantFrom("true", "false", "yes"), fc.integer(), fc.constant(null)),
};
const percentage: Field = {
  valid: fc.integer({ min: 0, max: 100 }),
  invalid: fc.oneof(fc.integer({ min: 101 }), fc.integer({ max: -1 }), fc.constant(50.5), notANumber),
};

const FIELDS: Record<Kind, Record<string, Field>> = {
  Instance: {
    podUuid: uuidField(),
    podTag: uuidField(),
    imageUuid: uuidField(),
    gpuUuid: uuidField(true),
    gpuNums: oneOf([1, 2, 4, 8]),
    title: {
      valid: fc.string({ maxLength: 50, unit: "grapheme" }),
      invalid: fc.oneof(
        fc.string({ minLength: 51, maxLength: 80, unit: "binary-ascii" }),
        fc.integer(),
        fc.constant(null),
      ),
    },
    running: bool,
    shutdownAt: {
      valid: fc.oneof(fc.integer({ min: 1, max: 2 ** 40 }), fc.constant("2031-01-02T03:04:05Z")),
      invalid: fc.oneof(
        fc.integer({ max: 0 }),
        fc.constant(1.5),
        fc.constantFrom("tomorrow", "2031-01-02", ""),
      ),
    },
    waitTimeoutSeconds: positiveInt,
    adoptInstanceUuid: uuidField(),
  },
  IdleClosePolicy: {
    instanceUuid: uuidField(true),
    idlePeriodMinutes: oneOf([10, 30, 60, 120]),
    destroyOnIdle: bool,
    gpuThreshold: percentage,
    memoryThreshold: percentage,
  },
  PersonalImage: {
    instanceUuid: uuidField(),
    adoptImageUuid: uuidField(),
    waitTimeoutSeconds: positiveInt,
  },
};

/** Names a program could never mean as inputs, some of them Object.prototype's own. */
const strayField = fc.oneof(
  fc.constantFrom("toString", "constructor", "hasOwnProperty", "valueOf", "podUUID", "gpu_nums", "name"),
  fc.string({ minLength: 1, maxLength: 12 }),
);

interface Drawn {
  news: Record<string, unknown>;
  /** Fields given a value their own rule refuses (or left out while required); stray fields too. */
  invalid: string[];
}

function inputsOf(kind: Kind): fc.Arbitrary<Drawn> {
  const fields = FIELDS[kind];
  const perField = Object.entries(fields).map(([name, f]) =>
    fc
      .oneof(
        { weight: 6, arbitrary: f.valid.map((value) => ({ value, invalid: false })) },
        { weight: 2, arbitrary: f.invalid.map((value) => ({ value, invalid: true })) },
        { weight: 1, arbitrary: fc.constant({ value: UNKNOWN, invalid: false }) },
        { weight: 3, arbitrary: fc.constant({ value: undefined, invalid: f.required === true }) },
      )
      .map((drawn) => ({ name, ...drawn })),
  );
  const strays = fc.uniqueArray(
    strayField.filter((s) => !Object.hasOwn(fields, s) && s !== "__provider" && s !== "__proto__"),
    { maxLength: 2 },
  );
  return fc
    .tuple(fc.tuple(...perField), strays, fc.array(fc.jsonValue(), { minLength: 2, maxLength: 2 }))
    .map(([drawn, stray, strayValues]) => {
      const news: Record<string, unknown> = {};
      for (const d of drawn) if (d.value !== undefined) news[d.name] = d.value;
      stray.forEach((s, i) =>
        Object.defineProperty(news, s, {
          value: strayValues[i] ?? null,
          enumerable: true,
          writable: true,
          configurable: true,
        }),
      );
      return { news, invalid: [...drawn.filter((d) => d.invalid).map((d) => d.name), ...stray] };
    });
}

interface Verdict {
  crashed: string[];
  unnamed: string[];
  missed: string[];
}

/** The properties one check result must hold; returns what broke them (empty when none did). */
function judge(
  kind: Kind,
  drawn: Drawn,
  result: { failures: { property: string; reason: string }[] },
): Verdict {
  const unnamed = result.failures
    .filter((f) => f.property === "" || !f.reason.includes(f.property))
    .map((f) => `${kind}: ${JSON.stringify(f)}`);
  const named = new Set(result.failures.map((f) => f.property));
  const missed = drawn.invalid
    .filter((field) => !named.has(field))
    .map((field) => `${kind}.${field} in ${JSON.stringify(drawn.news)}`);
  return { crashed: [], unnamed, missed };
}

// ---- Malformed requests -------------------------------------------------------------------------

const GET_PATHS = [
  "/instance/list",
  "/instance/info",
  "/gpu/list",
  "/pod/list",
  "/image/market/list",
  "/image/private/list",
  "/balance/info",
  "/recharge/list",
  "/bill/list",
  "/workflow/market/list",
  "/workflow/market/info",
  "/workflow/run/info",
  "/workflow/run/list",
  "/workflow/run/execution",
  "/model-runs/list",
  "/model-runs/events",
  "/assets/asset_x",
];
const POST_PATHS = [
  "/instance/create_by_pod",
  "/instance/create_by_image",
  "/instance/update_title",
  "/instance/destroy",
  "/instance/set_idle_close",
  "/instance/startup",
  "/instance/shutdown",
  "/instance/restart",
  "/instance/shutdown_timer",
  "/instance/save_image",
  "/image/private/delete",
  "/workflow/run/submit",
  "/model-runs/videos",
  "/model-runs/cancel",
  "/assets",
];
const KNOWN_FIELDS = [
  "instance_uuid",
  "pod_uuid",
  "pod_tag",
  "gpu_uuid",
  "gpu_nums",
  "image_uuid",
  "title",
  "idle_period_minutes",
  "destroy",
  "idle_gpu_threshold",
  "idle_fb_threshold",
  "enable",
  "shutdown_time",
  "workflow_id",
  "revision_id",
  "inputs",
  "idempotency_key",
  "run_id",
  "page",
  "page_size",
  "asset_id",
];

interface MalformedRequest {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Raw JSON text of values at or past every limit: huge and tiny numbers, long strings, deep nesting. */
const hugeJson = fc.oneof(
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER * 1024, 2 ** 53 + 1, 5e-324).map(String),
  fc.constant(JSON.stringify("x".repeat(100_000))),
  fc.constant("9".repeat(400)),
  fc.integer({ min: 1, max: 3000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
);

const auth = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ authorization: `Bearer ${DEMO_KEY}` }) },
  { weight: 1, arbitrary: fc.constant({} as Record<string, string>) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("Bearer", "Basic abc", "Bearer  ", "bearer x y", `Bearer ${DEMO_KEY}x`)
      .map((v) => ({ authorization: v })),
  },
);

const json = { "content-type": "application/json" };

const malformed: fc.Arbitrary<MalformedRequest> = fc.oneof(
  fc.record({ path: fc.constantFrom(...POST_PATHS), body: fc.string({ maxLength: 60 }), auth }).map((r) => ({
    kind: "bad-json",
    method: "POST",
    path: r.path,
    headers: { ...json, ...r.auth },
    body: r.body.length > 0 && r.body.trim() !== "" ? `{${r.body}` : "{",
  })),
  fc
    .record({
      path: fc.constantFrom(...POST_PATHS),
      body: fc.dictionary(fc.constantFrom(...KNOWN_FIELDS), fc.jsonValue({ maxDepth: 3 })),
      auth,
    })
    .map((r) => ({
      kind: "wrong-types",
      method: "POST",
      path: r.path,
      headers: { ...json, ...r.auth },
      body: JSON.stringify(r.body),
    })),
  fc
    .record({
      path: fc.constantFrom(...POST_PATHS),
      field: fc.constantFrom(...KNOWN_FIELDS),
      value: hugeJson,
      auth,
    })
    .map((r) => ({
      kind: "huge-values",
      method: "POST",
      path: r.path,
      headers: { ...json, ...r.auth },
      body: `{"${r.field}":${r.value}}`,
    })),
  fc
    .record({
      path: fc.constantFrom(...POST_PATHS),
      extra: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), {
        minKeys: 1,
        maxKeys: 4,
      }),
      auth,
    })
    .map((r) => ({
      kind: "unknown-fields",
      method: "POST",
      path: r.path,
      headers: { ...json, ...r.auth },
      body: JSON.stringify({ instance_uuid: "ins-x", ...r.extra }),
    })),
  fc
    .record({
      shape: fc.constantFrom(
        "no-boundary",
        "wrong-boundary",
        "truncated",
        "no-file",
        "empty",
        "json-as-multipart",
        "huge-field",
      ),
      auth,
    })
    .map((r) => multipart(r.shape, r.auth)),
  fc
    .record({
      route: fc.oneof(
        fc.constantFrom(...POST_PATHS).map((path) => ({ path, methods: ["GET", "PUT", "DELETE", "PATCH"] })),
        fc.constantFrom(...GET_PATHS).map((path) => ({ path, methods: ["POST", "PUT", "DELETE", "PATCH"] })),
      ),
      pick: fc.nat(),
      auth,
    })
    .map((r) => ({
      kind: "wrong-method",
      method: r.route.methods[r.pick % r.route.methods.length],
      path: r.route.path,
      headers: { ...r.auth },
    })),
  fc
    .record({
      path: fc.constantFrom(...GET_PATHS),
      query: fc.array(
        fc.tuple(
          fc.constantFrom(...KNOWN_FIELDS, "status", "cuda_version", "name"),
          fc.oneof(
            fc.string({ maxLength: 12 }),
            fc.constantFrom("-1", "0", "1e9", "NaN", "%zz", "a&b", "99999999999999999999"),
          ),
        ),
        { maxLength: 4 },
      ),
      auth,
    })
    .map((r) => ({
      kind: "bad-query",
      method: "GET",
      path: `${r.path}?${r.query.map(([k, v]) => `${k}=${v.replace(/[#\s]/g, "")}`).join("&")}`,
      headers: { ...r.auth },
    })),
  fc
    .record({
      path: fc.constantFrom(...POST_PATHS),
      type: fc.constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
        "application/json; charset=utf-16",
        "nonsense",
      ),
      body: fc.string({ maxLength: 40 }),
      auth,
    })
    .map((r) => ({
      kind: "wrong-content-type",
      method: "POST",
      path: r.path,
      headers: { "content-type": r.type, ...r.auth },
      body: r.body,
    })),
  fc
    .record({
      segments: fc.array(
        fc.constantFrom("instance", "..", "%2e%2e", "x", "v1", "%00", "list", "assets", ""),
        { minLength: 1, maxLength: 4 },
      ),
      auth,
    })
    .map((r) => ({
      kind: "unknown-path",
      method: "GET",
      path: `/${r.segments.join("/")}`,
      headers: { ...r.auth },
    })),
);

function multipart(shape: string, authHeader: Record<string, string>): MalformedRequest {
  const boundary = "----fc-boundary";
  const part = (name: string, value: string, file = false) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file ? '; filename="a.png"\r\nContent-Type: image/png' : ""}\r\n\r\n${value}\r\n`;
  const bodies: Record<string, [string, string]> = {
    "no-boundary": ["multipart/form-data", part("file", "abc", true) + `--${boundary}--\r\n`],
    "wrong-boundary": [
      `multipart/form-data; boundary=other`,
      part("file", "abc", true) + `--${boundary}--\r\n`,
    ],
    truncated: [`multipart/form-data; boundary=${boundary}`, part("file", "abc", true).slice(0, 40)],
    "no-file": [
      `multipart/form-data; boundary=${boundary}`,
      part("media_type", "image") + `--${boundary}--\r\n`,
    ],
    empty: [`multipart/form-data; boundary=${boundary}`, ""],
    "json-as-multipart": [`multipart/form-data; boundary=${boundary}`, '{"file": "abc"}'],
    "huge-field": [
      `multipart/form-data; boundary=${boundary}`,
      part("ttl_hours", "9".repeat(5000)) + part("file", "abc", true) + `--${boundary}--\r\n`,
    ],
  };
  const [type, body] = bodies[shape];
  return {
    kind: "bad-multipart",
    method: "POST",
    path: "/assets",
    headers: { "content-type": type, ...authHeader },
    body,
  };
}

// ---- Crafted input -------------------------------------------------------------------------------

const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];
const SEPARATORS = ["\n", "\u0000", "\u2028", "\t", '","', "\\", "]["];

interface Tally {
  sent: number;
  serverErrors: string[];
}

/** Sends one crafted API call and counts a 5xx or a missing answer as a failure. */
async function crafted(
  t: TestEmulator,
  tally: Tally,
  method: string,
  path: string,
  options: Parameters<TestEmulator["api"]>[2] = {},
) {
  tally.sent += 1;
  try {
    const answer = await t.api(method, path, options);
    if (answer.status >= 500)
      tally.serverErrors.push(`${method} ${path} -> ${answer.status} ${answer.body?.msg}`);
    return answer;
  } catch (err) {
    tally.serverErrors.push(`${method} ${path}: no answer (${String(err)})`);
    return undefined;
  }
}

/** A request whose body stops arriving; resolves with what the server sent before it closed the connection. */
function slowBody(port: number): Promise<string> {
  const socket = connect({ host: "127.0.0.1", port }, () =>
    socket.write(
      `POST /api/open/v2/instance/update_title HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"instance_uuid":`,
    ),
  );
  return untilClosed(socket);
}

describe("bad input", () => {
  let emu: TestEmulator;
  let h: Harness;
  const figures: string[] = [];

  beforeAll(async () => {
    emu = await startTestEmulator();
    h = await gpucloudHarness({ config: providerConfig(emu.url) });
  });
  afterAll(async () => {
    await h?.stop();
    await emu?.close();
    reportFigure("faults", `faults[5 bad input]: ${figures.join(" ")}`);
  });

  it("check refuses every invalid input by name, never throws and never calls the API", async () => {
    const started = performance.now();
    await emu.admin("DELETE", "/requests");
    // Were check to reach for the cloud, it would find this emulator.
    const env = { url: process.env.GPUCLOUD_BASE_URL, key: process.env.GPUCLOUD_API_KEY };
    process.env.GPUCLOUD_BASE_URL = emu.url;
    process.env.GPUCLOUD_API_KEY = DEMO_KEY;
    const broken: string[] = [];
    let checked = 0;
    let refused = 0;
    try {
      for (const kind of Object.keys(FIELDS) as Kind[]) {
        const samples = fc.sample(inputsOf(kind), { numRuns: RUNS_PER_RESOURCE, seed: 5 });
        for (const drawn of samples) {
          checked += 1;
          try {
            const result = await providers[kind].check!({}, drawn.news);
            if (result.failures?.length) refused += 1;
            const verdict = judge(kind, drawn, { failures: result.failures ?? [] });
            broken.push(...verdict.unnamed, ...verdict.missed);
          } catch (err) {
            broken.push(`${kind} check threw ${String(err)} on ${JSON.stringify(drawn.news)}`);
          }
        }
      }
    } finally {
      if (env.url === undefined) delete process.env.GPUCLOUD_BASE_URL;
      else process.env.GPUCLOUD_BASE_URL = env.url;
      if (env.key === undefined) delete process.env.GPUCLOUD_API_KEY;
      else process.env.GPUCLOUD_API_KEY = env.key;
    }

    // A sample through the real dynamic-provider server, as the engine would send it.
    let throughServer = 0;
    for (const kind of Object.keys(FIELDS) as Kind[]) {
      const samples = fc.sample(inputsOf(kind), { numRuns: SERVER_SAMPLE / 3, seed: 6 });
      await bounded(
        8,
        samples.map((drawn) => async () => {
          throughServer += 1;
          try {
            const result = await h.check(kind, drawn.news);
            const verdict = judge(kind, drawn, result);
            broken.push(...verdict.unnamed, ...verdict.missed);
          } catch (err) {
            broken.push(
              `${kind} check through the server failed: ${String(err)} on ${JSON.stringify(drawn.news)}`,
            );
          }
        }),
      );
    }
    const apiCalls = (await emu.admin("GET", "/requests")).body.requests as unknown[];
    figures.push(
      `check: inputs=${checked + throughServer} (direct=${checked} via-server=${throughServer}) refused=${refused} ` +
        `crashes=0 unnamed-or-missed=${broken.length} api-calls=${apiCalls.length} in ${seconds(performance.now() - started)};`,
    );
    expect(broken.slice(0, 5)).toEqual([]);
    expect(apiCalls).toEqual([]);
  });

  it("names a stray field called like an Object.prototype member (found by the property above)", async () => {
    const { failures } = await providers.IdleClosePolicy.check!(
      {},
      { instanceUuid: "ins-1", idlePeriodMinutes: 10, toString: 1, constructor: "x" },
    );
    expect(failures?.map((f) => f.property).sort()).toEqual(["constructor", "toString"]);
  });

  it(
    "answers 10,000 malformed requests with the envelope and keeps serving",
    async () => {
      const started = performance.now();
      const requests = fc.sample(malformed, { numRuns: MALFORMED_REQUESTS, seed: 7 });
      const pool = new Pool(emu.url, { connections: 16 });
      const byKind = new Map<string, number>();
      const bad: string[] = [];
      let serverErrors = 0;
      try {
        await bounded(
          32,
          requests.map((r) => async () => {
            byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
            let text = "";
            let status = 0;
            try {
              const res = await pool.request({
                method: r.method as "GET",
                path: `/api/open/v2${r.path}`,
                headers: r.headers,
                body: r.body,
              });
              status = res.statusCode;
              text = await res.body.text();
            } catch (err) {
              bad.push(`${r.kind} ${r.method} ${r.path}: no answer (${String(err)})`);
              return;
            }
            if (status >= 500) serverErrors += 1;
            let body: { code?: unknown; msg?: unknown } | undefined;
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
            if (!body || !Number.isInteger(body.code) || typeof body.msg !== "string" || status >= 500) {
              bad.push(`${r.kind} ${r.method} ${r.path.slice(0, 80)} -> ${status} ${text.slice(0, 120)}`);
            }
          }),
        );
      } finally {
        await pool.close();
      }
      const health = await emu.api("GET", "/gpu/list");
      figures.push(
        `emulator: malformed-requests=${requests.length} (${[...byKind].map(([k, n]) => `${k}=${n}`).join(" ")}) ` +
          `non-envelope=${bad.length} 5xx=${serverErrors} healthy-after=${health.body.code === 0} in ${seconds(performance.now() - started)}`,
      );
      expect(bad.slice(0, 5)).toEqual([]);
      expect(health.body.code).toBe(0);
    },
    VOLUME_TIMEOUT_MS,
  );

  it(
    "takes crafted input of every kind the hostile review found without a crash, a 5xx or lost data",
    async () => {
      const started = performance.now();
      const dir = mkdtempSync(join(tmpdir(), "gpucloud-bad-input-"));
      const stateFile = join(dir, "state.json");
      const options = { stateFile, requestTimeoutMs: 300, balance: 100_000 };
      let t = await startTestEmulator(options);
      const tally: Tally = { sent: 0, serverErrors: [] };
      const counts: Record<string, number> = {};
      const count = (kind: string, n = 1) => (counts[kind] = (counts[kind] ?? 0) + n);
      try {
        const kept = [(await createInstance(t)).instance_uuid as string];

        // Prototype keys: as model-run values and input names, workflow inputs, upload names, paths, queries, JSON.
        for (const key of PROTOTYPE_KEYS) {
          for (const field of ["resolution", "ratio", "model", "generation_category"]) {
            await crafted(t, tally, "POST", "/model-runs/videos", {
              body: {
                idempotency_key: `p-${key}-${field}`,
                inputs: { model: "demo-video", prompt: "p", [field]: key },
              },
            });
          }
          await crafted(t, tally, "POST", "/model-runs/videos", {
            rawBody: `{"idempotency_key":"raw-${key}","inputs":{"model":"demo-video","prompt":"p","${key}":{"x":1}}}`,
          });
          await crafted(t, tally, "POST", "/workflow/run/submit", {
            rawBody: `{"workflow_id":"wf_portrait_studio","idempotency_key":"w-${key}","inputs":{"prompt":"p","reference_image":"https://example.com/a.png","${key}":"x"}}`,
          });
          await crafted(t, tally, "GET", "/instance/info", { query: { instance_uuid: key } });
          await crafted(t, tally, "GET", `/assets/${key}`);
          await crafted(t, tally, "GET", "/workflow/market/list", { query: { sort: key } });
          const form = new FormData();
          form.append("file", new Blob([Buffer.from("bytes")]), `a.${key}`);
          form.append(key, "x");
          tally.sent += 1;
          const upload = await fetch(`${t.apiBase}/assets`, {
            method: "POST",
            headers: { authorization: `Bearer ${DEMO_KEY}` },
            body: form,
          });
          const uploaded = (await upload.json()) as { code: number; data?: { mime_type?: unknown } };
          // The multipart parser refuses such field names with 400; an accepted file must get a plain MIME type.
          if (upload.status >= 500 || (uploaded.code === 0 && typeof uploaded.data?.mime_type !== "string")) {
            tally.serverErrors.push(`upload a.${key} -> ${upload.status} ${JSON.stringify(uploaded)}`);
          }
          const admin = await t.admin("PUT", `/users/${key}/balance`, { balance: 1 });
          if (admin.status !== 404) tally.serverErrors.push(`admin user ${key} -> ${admin.status}`);
          count("prototype-keys", 9);
        }

        // Crafted separators: no two distinct (workflow, key) pairs may share a run, and a replay is a replay.
        const runs = new Map<string, string>();
        for (const separator of SEPARATORS) {
          for (const [workflow_id, idempotency_key] of [
            ["wf_portrait_studio", `a${separator}b`],
            [`wf_portrait_studio${separator}a`, "b"],
            ["wf_portrait_studio", "a"],
            ["wf_portrait_studio", `a${separator}b`],
          ]) {
            const answer = await crafted(t, tally, "POST", "/workflow/run/submit", {
              body: {
                workflow_id,
                idempotency_key,
                inputs: { prompt: "p", reference_image: "https://example.com/a.png" },
              },
            });
            count("crafted-separators");
            const id = answer?.body.data?.run_order_id as string | undefined;
            if (id === undefined) continue;
            const pair = JSON.stringify([workflow_id, idempotency_key]);
            const other = [...runs].find(([p, r]) => r === id && p !== pair);
            if (other) tally.serverErrors.push(`run ${id} shared by ${pair} and ${other[0]}`);
            if (runs.has(pair) && runs.get(pair) !== id)
              tally.serverErrors.push(`${pair} replayed a different run`);
            runs.set(pair, id);
          }
        }

        // Slow bodies: cut off by the request timeout while other calls are answered.
        const slow = await Promise.all([
          ...Array.from({ length: 8 }, () => slowBody(t.running.port)),
          crafted(t, tally, "GET", "/instance/list").then(() => "answered"),
        ]);
        count("slow-bodies", 8);
        const slowAnswered = slow
          .slice(0, 8)
          .filter((text) => text !== "" && !text.startsWith("HTTP/1.1 408"));
        if (slowAnswered.length > 0)
          tally.serverErrors.push(`slow bodies answered: ${slowAnswered.join(" | ")}`);

        // Rotating made-up keys, at an emulator limiting 5 calls a second: refused or limited, and
        // remembered by the client's address, not by key.
        const limitedEmulator = await startTestEmulator({ rateLimit: 5 });
        let bogus: Awaited<ReturnType<typeof crafted>>[];
        let remembered: number;
        try {
          bogus = await Promise.all(
            Array.from({ length: 400 }, (_, i) =>
              crafted(limitedEmulator, tally, "GET", "/instance/list", { key: `bogus-${i}` }),
            ),
          );
          remembered = limitedEmulator.running.emulator.limiter.size();
        } finally {
          await limitedEmulator.close();
        }
        count("bogus-keys", bogus.length);
        const limited = bogus.filter((a) => a?.status === 429).length;
        if (bogus.some((a) => a !== undefined && a.status !== 401 && a.status !== 429)) {
          tally.serverErrors.push("a made-up key was served");
        }

        // Oversized stored inputs: refused naming the field; just under the limit is kept.
        for (const bytes of [
          MAX_STORED_INPUT_BYTES + 1,
          MAX_STORED_INPUT_BYTES * 4,
          MAX_STORED_INPUT_BYTES - 300,
        ]) {
          const answer = await crafted(t, tally, "POST", "/model-runs/videos", {
            body: {
              idempotency_key: `big-${bytes}`,
              inputs: { model: "demo-video", prompt: "x".repeat(bytes) },
            },
          });
          count("oversized-inputs");
          // Refused as a bad parameter (code 1) in either error mode: HTTP 200 by default, 400 in http mode.
          const refused = answer?.body.code === 1 && /^inputs: must be at most/.test(answer.body.msg);
          if (refused !== bytes > MAX_STORED_INPUT_BYTES)
            tally.serverErrors.push(
              `inputs of ${bytes} bytes -> ${answer?.status} code ${answer?.body.code}`,
            );
        }
        const sizeWithRuns = readFileSync(stateFile).length;

        // The emulator still answers, and everything acknowledged survives a restart.
        kept.push((await createInstance(t)).instance_uuid);
        const before = (await t.admin("GET", "/snapshot")).body;
        await t.close();
        t = await startTestEmulator(options);
        const after = (await t.admin("GET", "/snapshot")).body;
        const lost = isDeepStrictEqual(after, before) ? 0 : 1;
        const instances = (await t.api("GET", "/instance/list")).body.data.instance_list.map(
          (i: { instance_uuid: string }) => i.instance_uuid,
        );

        // Corrupt state files: each refused by name, the file left as it was, nothing started.
        const corrupt = [
          '{"version": 1, "now": 17',
          "{}",
          "",
          JSON.stringify({ ...before, version: 2 }),
          JSON.stringify({ ...before, now: "soon" }),
          JSON.stringify({
            ...before,
            rooms: { ...(before.rooms as object), instances: [{ instance_uuid: 1 }] },
          }),
        ];
        let refusedFiles = 0;
        for (const text of corrupt) {
          const file = join(dir, `corrupt-${refusedFiles}.json`);
          writeFileSync(file, text);
          try {
            await new Emulator({ stateFile: file }).open();
          } catch (error) {
            if (String(error).includes(`state file ${file}`) && readFileSync(file, "utf8") === text)
              refusedFiles += 1;
          }
        }
        count("corrupt-state-files", corrupt.length);

        const health = await t.api("GET", "/gpu/list");
        figures.push(
          `; crafted: requests=${tally.sent} (${Object.entries(counts)
            .map(([k, n]) => `${k}=${n}`)
            .join(" ")}) ` +
            `5xx-or-unanswered=${tally.serverErrors.length} crashes=${health.body.code === 0 ? 0 : 1} ` +
            `bogus-limited=${limited}/${bogus.length} limiter-entries=${remembered} ` +
            `corrupt-files-refused=${refusedFiles}/${corrupt.length} state-file=${Math.round(sizeWithRuns / 1024)}KiB ` +
            `data-lost=${lost + kept.filter((id) => !instances.includes(id)).length} in ${seconds(performance.now() - started)}`,
        );
        expect(tally.serverErrors.slice(0, 5)).toEqual([]);
        expect(after).toEqual(before);
        expect(health.body.code).toBe(0);
        expect(kept.filter((id) => !instances.includes(id))).toEqual([]);
        expect(after).toEqual(before);
        expect(refusedFiles).toBe(corrupt.length);
        expect(limited).toBeGreaterThan(0);
        expect(remembered).toBe(1);
      } finally {
        await t.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    VOLUME_TIMEOUT_MS,
  );
});
