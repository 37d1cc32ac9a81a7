/* global module, require */
/**
 * Jest's module loader, with V8's compiled code kept between the test files of a worker, and two modules
 * of @pulumi/pulumi that most files never use loaded only if something calls them.
 *
 * Jest evaluates every module again for each test file, in that file's own context, and compiles it
 * again: the scripts it makes cannot use V8's own cache (they carry a hook for `import()`). The suites
 * load @pulumi/pulumi (770 modules), grpc-js, fastify and zod in most files, and compiling them was about
 * a tenth of a worker's CPU (profiled). Here the first script made from a source is kept; the next time
 * that source is loaded, V8's code cache of the kept one (which holds what running it compiled) is handed
 * to the new script. V8 checks the data against the source and compiles afresh when it does not match
 * (`cachedDataRejected`), so a stale entry costs time, never behaviour. Modules still run once per test
 * file, in that file's context. A run that collects coverage compiles as jest does.
 */
const vm = require("node:vm");
const Runtime = require("jest-runtime").default;

/** Per source: the first script made from it, until its code cache is taken, then that cache. */
const compiled = new Map();
const uses = { offered: 0, accepted: 0 };

class CodeCachingScript extends vm.Script {
  constructor(source, options) {
    const entry = compiled.get(source);
    if (entry?.script) {
      entry.data = entry.script.createCachedData();
      entry.script = undefined;
    }
    super(source, entry?.data ? { ...options, cachedData: entry.data } : options);
    if (entry?.data) {
      uses.offered += 1;
      if (!this.cachedDataRejected) uses.accepted += 1;
    }
    if (!entry || this.cachedDataRejected) compiled.set(source, { script: this });
  }
}

/**
 * Modules evaluated again for every test file that loads them, for work few suites do: @npmcli/arborist as
 * `computeCodePaths`' module requires it (495 modules, for packaging a cloud function's dependencies, which
 * no suite does); TypeScript through @pulumi/pulumi's typescript-shim (9 MB of JavaScript, for serializing
 * a dynamic provider's functions, which the files that run a stack through the engine's mocks do); and
 * zod's translations of its messages (64 files its core requires as it loads, where English comes from a
 * file of its own). The requiring file gets a stand-in that loads the real module, through jest, in the
 * test file's registry, the first time any of it is read. testing/plugin-process.ts does the same in the
 * plugin processes the harness starts, and says why the stand-in claims to be an ES module.
 */
const PULUMI_FILE = /[\\/]@pulumi[\\/]pulumi[\\/]/;
const CODE_PATHS = /[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]closure[\\/]codePaths\.js$/;
const ZOD_FILE = /[\\/]zod[\\/]v4[\\/]/;
const deferred = (moduleName, from) =>
  (moduleName === "@npmcli/arborist" && CODE_PATHS.test(from)) ||
  (/[\\/]typescript-shim$/.test(moduleName) && PULUMI_FILE.test(from)) ||
  (moduleName === "../locales/index.cjs" && ZOD_FILE.test(from));

/** A stand-in for the module `load` returns, loading it when first read. */
function loadedWhenUsed(load) {
  let loaded;
  const real = () => (loaded ??= load());
  return new Proxy(
    {},
    {
      get: (_, key) => (key === "__esModule" ? true : Reflect.get(real(), key)),
      has: (_, key) => Reflect.has(real(), key),
      ownKeys: () => Reflect.ownKeys(real()),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
        return descriptor && { ...descriptor, configurable: true };
      },
    },
  );
}

class CodeCachingRuntime extends Runtime {
  requireModuleOrMock(from, moduleName) {
    if (!deferred(moduleName, from)) return super.requireModuleOrMock(from, moduleName);
    return loadedWhenUsed(() => super.requireModuleOrMock(from, moduleName));
  }

  createScriptFromCode(source, filename) {
    if (this._coverageOptions.collectCoverage) return super.createScriptFromCode(source, filename);
    // jest-runtime reads `vm.Script` when it makes a script: for that moment, it is the caching one.
    const { Script } = vm;
    vm.Script = CodeCachingScript;
    try {
      return super.createScriptFromCode(source, filename);
    } finally {
      vm.Script = Script;
    }
  }
}

/** How many scripts were made with a kept code cache, and how many of those V8 accepted. */
function codeCacheUse() {
  return { ...uses };
}

module.exports = CodeCachingRuntime;
module.exports.codeCacheUse = codeCacheUse;
module.exports.CodeCachingScript = CodeCachingScript;
module.exports.loadedWhenUsed = loadedWhenUsed;
