import {
  checkModelRunInputs,
  checkWorkflowInputs,
  GpuCloudClient,
  InputValidationError,
  normalizeLabel,
  type ManifestParameter,
  type WorkflowDetail,
} from "pulumi-gpucloud/sdk";

const manifest: ManifestParameter[] = [
  { name: "prompt", value_type: "string", required: true },
  { name: "reference_image", value_type: "image_input", required: true },
  { name: "style_image", value_type: "image", required: false },
  { name: "clip", value_type: "video", required: false },
  { name: "steps", value_type: "int", required: false },
  { name: "cfg_scale", value_type: "float", required: false },
  { name: "hires_fix", value_type: "bool", required: false },
  {
    name: "sampler",
    value_type: "string",
    ui_schema: {
      control: "select",
      options: [
        { label: "Euler", value: "euler" },
        { label: "DPM", value: "dpmpp_2m" },
      ],
    },
  },
  {
    name: "batch_size",
    value_type: "int",
    ui_schema: {
      control: "select",
      options: [
        { label: "One", value: 1 },
        { label: "Two", value: 2 },
      ],
    },
  },
  {
    name: "upscale",
    value_type: "bool",
    ui_schema: { control: "select", options: [{ label: "Yes", value: true }] },
  },
  { name: "legacy", value_type: "lora_name", required: false },
];

const good = { prompt: "a cat", reference_image: "asset://asset_abc123" };

function fields(inputs: unknown): string[] {
  return checkWorkflowInputs(manifest, inputs).issues.map((i) => i.field);
}

function reasonFor(inputs: unknown, field: string): string | undefined {
  return checkWorkflowInputs(manifest, inputs).issues.find((i) => i.field === field)?.reason;
}

describe("workflow inputs against the manifest", () => {
  it("accepts declared names with their JSON types", () => {
    const inputs = {
      ...good,
      steps: 30,
      cfg_scale: 7.5,
      hires_fix: false,
      sampler: "euler",
      batch_size: 2,
      upscale: true,
      legacy: "anything",
    };
    expect(checkWorkflowInputs(manifest, inputs).issues).toEqual([]);
  });

  it("accepts a float given as a whole number", () => {
    expect(fields({ ...good, cfg_scale: 7 })).toEqual([]);
  });

  it("refuses a name the manifest does not declare, naming the input", () => {
    expect(reasonFor({ ...good, seed: 1 }, "inputs.seed")).toMatch(/not declared in the workflow's manifest/);
  });

  it("allows the legacy contains_real_person_material flag as a boolean only", () => {
    expect(fields({ ...good, contains_real_person_material: true })).toEqual([]);
    expect(fields({ ...good, contains_real_person_material: "yes" })).toEqual([
      "inputs.contains_real_person_material",
    ]);
  });

  it("refuses quoted numbers and string booleans", () => {
    expect(reasonFor({ ...good, steps: "30" }, "inputs.steps")).toMatch(/integer \(not quoted\)/);
    expect(reasonFor({ ...good, steps: 2.5 }, "inputs.steps")).toMatch(/integer/);
    expect(reasonFor({ ...good, cfg_scale: "7.5" }, "inputs.cfg_scale")).toMatch(/number/);
    expect(reasonFor({ ...good, hires_fix: "false" }, "inputs.hires_fix")).toMatch(/boolean/);
    expect(reasonFor({ ...good, prompt: 5 }, "inputs.prompt")).toMatch(/string/);
  });

  it("requires select values to be an option with its original JSON type", () => {
    expect(reasonFor({ ...good, sampler: "ddim" }, "inputs.sampler")).toMatch(
      /one of the select options "euler", "dpmpp_2m"/,
    );
    expect(reasonFor({ ...good, batch_size: 3 }, "inputs.batch_size")).toMatch(/select options 1, 2/);
    expect(reasonFor({ ...good, legacy: 3 }, "inputs.legacy")).toBeUndefined();
    expect(fields({ ...good, upscale: "true" })).toEqual(["inputs.upscale"]);
  });

  it("names every missing required input", () => {
    expect(fields({})).toEqual(["inputs.prompt", "inputs.reference_image"]);
    expect(reasonFor({ prompt: "x", reference_image: null }, "inputs.reference_image")).toMatch(/required/);
  });

  it("accepts media as http(s) URL, data URL, asset:// reference or an object", () => {
    for (const value of [
      "https://example.com/a.png",
      "http://example.com/a.png",
      "data:image/png;base64,iVBORw0KGgo=",
      "asset://asset_x1",
      { uri: "asset://asset_x1", role: "reference_image", label: "face" },
    ]) {
      expect(fields({ ...good, style_image: value })).toEqual([]);
    }
  });

  it("refuses a bare asset id and says how to write it", () => {
    expect(reasonFor({ ...good, reference_image: "asset_abc123" }, "inputs.reference_image")).toBe(
      'a bare asset id is not valid; write "asset://asset_abc123"',
    );
  });

  it("refuses other resource strings", () => {
    for (const value of ["ftp://x/y.png", "/tmp/a.png", "data:image/png,raw", "asset://", 7]) {
      expect(fields({ ...good, style_image: value })).toEqual(["inputs.style_image"]);
    }
    expect(fields({ ...good, style_image: { role: "x" } })).toEqual(["inputs.style_image.uri"]);
  });

  it("normalises labels and requires them unique in the request", () => {
    expect(normalizeLabel("  @face ")).toBe("face");
    expect(normalizeLabel("@@face")).toBe("@face");
    const checked = checkWorkflowInputs(manifest, {
      ...good,
      style_image: { uri: "asset://asset_a", label: " @face " },
    });
    expect(checked.issues).toEqual([]);
    expect(checked.inputs.style_image).toEqual({ uri: "asset://asset_a", label: "face" });
    const clash = checkWorkflowInputs(manifest, {
      ...good,
      style_image: { uri: "asset://asset_a", label: "face" },
      clip: { uri: "https://x.test/v.mp4", label: "@face" },
    });
    expect(clash.issues).toEqual([
      {
        field: "inputs.clip.label",
        reason: '"face" is already used by inputs.style_image; labels must be unique in a request',
      },
    ]);
    expect(fields({ ...good, style_image: { uri: "asset://asset_a", label: " @ " } })).toEqual([
      "inputs.style_image.label",
    ]);
  });

  it("throws InputValidationError from client.workflows.validateInputs with every issue", () => {
    const client = new GpuCloudClient({ baseUrl: "http://127.0.0.1:9" });
    const detail = {
      workflow_id: "wf_1",
      revision_id: "rev_1",
      editable_parameter_manifest: manifest,
    } as WorkflowDetail;
    try {
      client.workflows.validateInputs(detail, { prompt: 1, seed: 2 });
      throw new Error("expected a throw");
    } catch (err) {
      expect(err).toBeInstanceOf(InputValidationError);
      const e = err as InputValidationError;
      expect(e.issues.map((i) => i.field)).toEqual([
        "inputs.prompt",
        "inputs.seed",
        "inputs.reference_image",
      ]);
      expect(e.message).toMatch(
        /^Could not submit a run of workflow wf_1: 3 inputs are invalid \(nothing was sent\)/,
      );
    }
    return client.close();
  });
});

describe("model-run inputs", () => {
  const base = { model: "demo-video", prompt: "a cat surfing" };

  function issues(inputs: unknown): string[] {
    return checkModelRunInputs(inputs).issues.map((i) => i.field);
  }

  it("requires model and prompt", () => {
    expect(issues({})).toEqual(["inputs.model", "inputs.prompt"]);
    expect(issues(undefined)).toEqual(["inputs"]);
    expect(issues(base)).toEqual([]);
  });

  it("requires first_frame for first_frame_to_video", () => {
    expect(issues({ ...base, generation_category: "first_frame_to_video" })).toEqual(["inputs.first_frame"]);
    expect(
      issues({ ...base, generation_category: "first_frame_to_video", first_frame: "https://x.test/f.png" }),
    ).toEqual([]);
  });

  it("requires both frames for first_last_frame_to_video", () => {
    expect(issues({ ...base, generation_category: "first_last_frame_to_video" })).toEqual([
      "inputs.first_frame",
      "inputs.last_frame",
    ]);
    expect(
      issues({
        ...base,
        generation_category: "first_last_frame_to_video",
        first_frame: "asset://asset_a",
        last_frame: { uri: "asset://asset_b", role: "last_frame" },
      }),
    ).toEqual([]);
  });

  it("checks reference media lists, labels, duration and types", () => {
    expect(issues({ ...base, images: "https://x.test/a.png" })).toEqual(["inputs.images"]);
    expect(issues({ ...base, images: ["asset_a"] })).toEqual(["inputs.images[0]"]);
    expect(
      issues({
        ...base,
        images: [{ uri: "asset://asset_a", label: "hero" }],
        videos: [{ uri: "asset://asset_b", label: "@hero" }],
      }),
    ).toEqual(["inputs.videos[0].label"]);
    expect(issues({ ...base, duration: "5" })).toEqual(["inputs.duration"]);
    expect(issues({ ...base, duration: 0 })).toEqual(["inputs.duration"]);
    expect(issues({ ...base, resolution: 720 })).toEqual(["inputs.resolution"]);
    expect(issues({ ...base, contains_real_person_material: 1 })).toEqual([
      "inputs.contains_real_person_material",
    ]);
  });

  it("throws InputValidationError from client.modelRuns.submit before sending, idempotency key included", async () => {
    const client = new GpuCloudClient({ baseUrl: "http://127.0.0.1:9" });
    await expect(
      client.modelRuns.submit({ idempotency_key: "", inputs: { model: "demo-video", prompt: "" } }),
    ).rejects.toMatchObject({
      name: "InputValidationError",
      issues: [
        { field: "idempotency_key", reason: expect.stringContaining("required") },
        { field: "inputs.prompt", reason: "is required (a non-empty string)" },
      ],
    });
    await client.close();
  });
});

describe("inputs whose names or values are also the names of Object.prototype members", () => {
  const PROTOTYPE_KEYS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

  it.each(PROTOTYPE_KEYS)("takes generation_category %j as an unknown category, not a crash", (category) => {
    expect(
      checkModelRunInputs({ model: "demo-video", prompt: "p", generation_category: category }).issues,
    ).toEqual([]);
  });

  it.each(PROTOTYPE_KEYS)("takes a manifest value_type %j as an unknown type, not a crash", (valueType) => {
    const odd: ManifestParameter[] = [{ name: "x", value_type: valueType, required: true }];
    expect(checkWorkflowInputs(odd, { x: "anything" }).issues).toEqual([]);
  });

  it("reports a required manifest entry named like a prototype member when it is missing", () => {
    const odd: ManifestParameter[] = [
      { name: "toString", value_type: "string", required: true },
      { name: "constructor", value_type: "int", required: true },
    ];
    expect(checkWorkflowInputs(odd, {}).issues.map((i) => i.field)).toEqual([
      "inputs.toString",
      "inputs.constructor",
    ]);
  });

  it('keeps an input named "__proto__" as an input: refused when undeclared, sent when declared', () => {
    const undeclared = JSON.parse('{"prompt": "p", "__proto__": {"polluted": true}}') as Record<
      string,
      unknown
    >;
    expect(checkWorkflowInputs(manifest.slice(0, 1), undeclared).issues.map((i) => i.field)).toEqual([
      "inputs.__proto__",
    ]);
    const declared: ManifestParameter[] = [{ name: "__proto__", value_type: "string", required: true }];
    const checked = checkWorkflowInputs(declared, JSON.parse('{"__proto__": "kept"}'));
    expect(checked.issues).toEqual([]);
    expect(JSON.stringify(checked.inputs)).toBe('{"__proto__":"kept"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("answers a submit with generation_category constructor with a GpuCloudError, never a TypeError", async () => {
    const client = new GpuCloudClient({ baseUrl: "http://127.0.0.1:9", maxRetries: 0 });
    const err = await client.modelRuns
      .submit({
        idempotency_key: "k-1",
        inputs: {
          model: "demo-video",
          prompt: "p",
          generation_category: "constructor",
          duration: "x" as never,
        },
      })
      .catch((e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(InputValidationError);
    expect((err as InputValidationError).issues.map((i) => i.field)).toEqual(["inputs.duration"]);
  });
});

describe("client options", () => {
  it.each([
    [{ baseUrl: "127.0.0.1:8787" }, "baseUrl"],
    [{ baseUrl: "http://127.0.0.1:8787", timeoutMs: 0 }, "timeoutMs"],
    [{ baseUrl: "http://127.0.0.1:8787", timeoutMs: 2 ** 31 }, "timeoutMs"],
    [{ baseUrl: "http://127.0.0.1:8787", timeoutMs: Number.NaN }, "timeoutMs"],
    [{ baseUrl: "http://127.0.0.1:8787", maxRateLimitWaitMs: -1 }, "maxRateLimitWaitMs"],
    [{ baseUrl: "http://127.0.0.1:8787", maxRetries: 1.5 }, "maxRetries"],
  ])("refuses %j with an InputValidationError naming %s", (options, field) => {
    let thrown: unknown;
    try {
      new GpuCloudClient(options);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InputValidationError);
    expect((thrown as InputValidationError).issues.map((i) => i.field)).toEqual([field]);
  });

  function refusal(options: { baseUrl: string; apiKey?: string }): InputValidationError {
    try {
      new GpuCloudClient(options);
    } catch (err) {
      if (err instanceof InputValidationError) return err;
      throw err;
    }
    throw new Error("the client took the options");
  }

  it.each([
    ["a trailing zero-width space", "sk-live-77a1\u200b", "character 13 is U+200B, which is not ASCII"],
    ["a line break inside", "sk-live\n-77a1", "character 8 is a control character (U+000A)"],
    ["a space", "sk-live 77a1", "character 8 is a space"],
    ["a no-break space", "sk-live-77a1\u00a0", "character 13 is U+00A0, which is not ASCII"],
  ])("refuses an apiKey holding %s, naming where without showing the key", (_, apiKey, where) => {
    const err = refusal({ baseUrl: "http://127.0.0.1:8787", apiKey });
    expect(err.issues).toEqual([
      {
        field: "apiKey",
        reason: `must contain only printable ASCII characters without spaces, but ${where} (often a stray character from a paste)`,
      },
    ]);
    expect(err.message).toMatch(
      /^Could not create the GPU cloud client: 1 input is invalid \(nothing was sent\): apiKey: /,
    );
    expect(`${err.message}${JSON.stringify(err)}`).not.toContain("sk-live");
  });

  it("refuses a baseUrl holding a character a request would drop or encode, or one that is not a URL", () => {
    expect(refusal({ baseUrl: "http://127.0.0.1:8787\u200b" }).issues).toEqual([
      {
        field: "baseUrl",
        reason:
          "must contain only printable ASCII characters without spaces, but character 22 is U+200B, which is not ASCII (often a stray character from a paste)",
      },
    ]);
    expect(refusal({ baseUrl: "http://127.0.0.1:87\t87" }).issues.map((i) => i.field)).toEqual(["baseUrl"]);
    expect(refusal({ baseUrl: "http://127.0.0.1:99999" }).issues).toEqual([
      { field: "baseUrl", reason: 'is not a URL (got "http://127.0.0.1:99999")' },
    ]);
  });

  it("takes a key of printable ASCII", () => {
    expect(
      () => new GpuCloudClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "sk-~!#$%&'*+./=?^_`|" }),
    ).not.toThrow();
  });
});
