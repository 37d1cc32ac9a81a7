/**
 * runtime.js: a source loaded again is compiled from the code cache of its first script, runs the same,
 * and jest-runtime still makes its scripts through `vm.Script` (or the cache would silently stop working);
 * @pulumi/pulumi's package walker, loaded when first used, works when used.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as VM from "node:vm";
import Runtime from "jest-runtime";

/** The vm module itself (an `import` would give a copy of its exports), as jest-runtime sees it. */
const vm = require("node:vm") as typeof VM;
const { CodeCachingScript, codeCacheUse, loadedWhenUsed } = require("./runtime.js") as {
  CodeCachingScript: typeof VM.Script;
  codeCacheUse: () => { offered: number; accepted: number };
  loadedWhenUsed: <T extends object>(load: () => T) => T;
};

/** A module's code as jest wraps it, with a function that runs only when called. */
function source(answer: number): string {
  return `({ answer: () => { const parts = [${answer}, 0]; return parts.reduce((a, b) => a + b); } })`;
}

describe("the code-caching runtime", () => {
  it("compiles a source loaded again from its first script's code cache, which V8 accepts", () => {
    const before = codeCacheUse();
    const first = new CodeCachingScript(source(42), { filename: "/first.js" });
    expect(first.runInNewContext().answer()).toBe(42);
    const again = new CodeCachingScript(source(42), { filename: "/again.js" });
    expect(again.cachedDataRejected).toBe(false);
    expect(again.runInNewContext().answer()).toBe(42);
    expect(codeCacheUse()).toEqual({ offered: before.offered + 1, accepted: before.accepted + 1 });
  });

  it("compiles a changed source afresh", () => {
    const before = codeCacheUse();
    new CodeCachingScript(source(1), { filename: "/one.js" }).runInNewContext();
    const changed = new CodeCachingScript(source(2), { filename: "/one.js" });
    expect(changed.runInNewContext().answer()).toBe(2);
    expect(codeCacheUse()).toEqual(before);
  });

  it("jest-runtime makes its scripts with the vm module's Script of the moment", () => {
    const made: string[] = [];
    const { Script } = vm;
    class Spy extends Script {
      constructor(code: string, options?: VM.ScriptOptions) {
        super(code, options);
        made.push(code);
      }
    }
    const loader = {
      _resolver: { isCoreModule: () => false },
      _fileTransforms: new Map(),
      wrapCodeInModuleWrapper: (code: string) => code,
    };
    (vm as { Script: typeof VM.Script }).Script = Spy;
    try {
      const { createScriptFromCode } = Runtime.prototype as unknown as {
        createScriptFromCode(code: string, filename: string): VM.Script;
      };
      createScriptFromCode.call(loader, "1 + 1", "/module.js");
    } finally {
      (vm as { Script: typeof VM.Script }).Script = Script;
    }
    expect(made).toEqual(["1 + 1"]);
  });
});

describe("a module loaded when first used", () => {
  it("is loaded by the first read, once, and reads as the module", () => {
    const loads: string[] = [];
    const stand = loadedWhenUsed(() => {
      loads.push("loaded");
      return { Walker: class Walker {}, version: "1" };
    });
    expect(loads).toEqual([]);
    expect((stand as { __esModule?: boolean }).__esModule).toBe(true);
    expect(loads).toEqual([]);
    expect(stand.version).toBe("1");
    expect(new stand.Walker()).toBeInstanceOf(stand.Walker);
    expect(Object.keys(stand)).toEqual(["Walker", "version"]);
    expect(loads).toEqual(["loaded"]);
  });

  it("is what @pulumi/pulumi's closure serializer gets for TypeScript in a test file, and works there", async () => {
    const pulumi = await import("@pulumi/pulumi");
    const answer = 42;
    const { text } = await pulumi.runtime.serializeFunction(() => answer);
    expect(text).toContain("42");
  });

  it("is what zod's core gets for its translations in a test file: English without them, any when asked", async () => {
    const { z } = await import("zod");
    const message = () => z.string().safeParse(1).error?.issues[0].message;
    expect(message()).toBe("Invalid input: expected string, received number");
    try {
      z.config(z.locales.de());
      expect(message()).toMatch(/^Ungültige Eingabe/);
    } finally {
      z.config(z.locales.en());
    }
    expect(message()).toBe("Invalid input: expected string, received number");
  });

  it("is what @pulumi/pulumi's computeCodePaths gets in a test file, and works there", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "code-paths-"));
    const cwd = process.cwd();
    try {
      fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "p", dependencies: {} }));
      fs.writeFileSync(path.join(dir, "included.js"), "module.exports = 1;\n");
      process.chdir(dir);
      const pulumi = await import("@pulumi/pulumi");
      const paths = await pulumi.runtime.computeCodePaths({ extraIncludePaths: ["included.js"] });
      expect([...paths.keys()]).toEqual(["included.js"]);
    } finally {
      process.chdir(cwd);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
