/**
 * The provider stored in state when the package is installed the way users install it (a temporary project
 * with `npm pack`'s tarball in node_modules), and the provider server of that project running it.
 */
import * as path from "node:path";
import { installPackedCopy, type InstalledProject, type StoredProviders } from "../../dev/installed";
import { isStoredAsRequire, kindModule, type ModuleLayout } from "../../provider/shim";
import { DEMO_KEY } from "../emulator/helpers";
import { startWorld, type World } from "../support/world";
import { reportFigure } from "../support/figures";

/** DESIGN target (issue 8): at most 2,500 bytes per resource, which stores the provider twice. */
const BYTES_PER_COPY = 1250;

describe("the provider stored by an installed package", () => {
  let project: InstalledProject;
  let stored: StoredProviders;
  beforeAll(async () => {
    project = await installPackedCopy();
    process.env.GPUCLOUD_API_KEY = "sk-live-must-not-leak";
    try {
      stored = await project.storedProviders();
    } finally {
      delete process.env.GPUCLOUD_API_KEY;
    }
  }, 60_000);
  afterAll(() => project?.remove());

  it("is one require of the resource's own module, within the size target", () => {
    for (const [kind, text] of Object.entries(stored) as [keyof StoredProviders, string][]) {
      reportFigure(
        "serialized provider, installed package",
        `${kind}: ${Buffer.byteLength(text)} bytes per copy`,
      );
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(BYTES_PER_COPY);
      expect(text).toContain(`require("pulumi-gpucloud/dynamic/${kindModule(kind)}")`);
      expect(text.match(/require\(/g)).toHaveLength(1);
      expect(text).not.toContain("sk-live-must-not-leak");
      expect(text).not.toContain("GPUCLOUD");
    }
  });

  describe("run by the provider server in the project's folder", () => {
    let w: World;
    beforeAll(async () => (w = await startWorld({ server: { providers: stored, cwd: project.dir } })));
    afterAll(() => w?.stop());

    it("creates, renames, polices and deletes an instance", async () => {
      const instance = await w.advancing(
        w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, title: "installed" })),
      );
      expect(instance.outputs).toMatchObject({ statusName: "running", title: "installed" });
      const renamed = await w.h.update("Instance", instance, { ...instance.inputs, title: "renamed" });
      expect((await w.api.instances.info(renamed.id)).title).toBe("renamed");

      const policy = await w.h.create(
        "IdleClosePolicy",
        await w.h.checked("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 10 }),
      );
      await w.h.expectNoDrift("IdleClosePolicy", policy);
      await w.h.delete("IdleClosePolicy", policy);

      await w.advancing(w.h.delete("Instance", renamed));
      expect(await w.instanceUuids()).toEqual([]);
      expect(JSON.stringify(instance)).not.toContain(DEMO_KEY);
    });

    it("checks PersonalImage inputs with the same module form", async () => {
      const { failures } = await w.h.check("PersonalImage", { instanceUuid: "" });
      expect(failures.map((f) => f.property)).toEqual(["instanceUuid"]);
    });
  });
});

describe("when Pulumi stores the module itself instead of the function shim", () => {
  /** The Instance kind module inside a copy of the package at `packageDir`. */
  const kindFile = (packageDir: string) =>
    path.join(packageDir, "dist", "provider", "generated", "dynamic", "instance.js");
  const installed = kindFile(path.join("/proj", "node_modules", "pulumi-gpucloud"));
  const exportPath = "pulumi-gpucloud/dynamic/instance";
  const layout = (overrides: Partial<ModuleLayout> = {}): ModuleLayout => ({
    cwd: "/proj",
    filename: installed,
    pulumiModuleName: (p) =>
      p === "pulumi-gpucloud/dist/provider/generated/dynamic/instance.js" ? exportPath : p,
    resolveFromProgram: (request) => {
      if (request !== exportPath) throw new Error(`cannot resolve ${request}`);
      return installed;
    },
    ...overrides,
  });

  it("does for a package installed in the program's node_modules, or a parent folder's", () => {
    expect(isStoredAsRequire(exportPath, layout())).toBe(true);
    expect(isStoredAsRequire(exportPath, layout({ cwd: "/proj/infra" }))).toBe(true);
  });

  it("does not for a package reached through a symlink (this repository, npm link)", () => {
    const linked = kindFile(path.join("/src", "pulumi-gpucloud"));
    expect(
      isStoredAsRequire(exportPath, layout({ filename: linked, resolveFromProgram: () => linked })),
    ).toBe(false);
  });

  it("does not when Pulumi would write a path that is not our export (pnpm's .pnpm folder)", () => {
    const pnpm = path.join(
      "/proj",
      "node_modules",
      ".pnpm",
      "pulumi-gpucloud@0.1.0",
      "node_modules",
      "pulumi-gpucloud",
    );
    const filename = kindFile(pnpm);
    expect(isStoredAsRequire(exportPath, layout({ filename, resolveFromProgram: () => filename }))).toBe(
      false,
    );
  });

  it("does not when Pulumi's mapping fails, or the program's folder would load another copy", () => {
    const failing = () => {
      throw new Error('package.json export path for "x" not found');
    };
    expect(isStoredAsRequire(exportPath, layout({ pulumiModuleName: failing }))).toBe(false);
    expect(isStoredAsRequire(exportPath, layout({ resolveFromProgram: failing }))).toBe(false);
    expect(
      isStoredAsRequire(exportPath, layout({ resolveFromProgram: () => "/elsewhere/instance.js" })),
    ).toBe(false);
  });
});
