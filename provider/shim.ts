/**
 * The provider stored in state (`__provider`) for every gpucloud resource, written twice per resource (as an
 * input and as an output), so its size is paid by every resource in every checkpoint
 * (docs/design/pulumi-machinery.md#the-stored-provider).
 *
 * Pulumi's serializer writes a module that sits in node_modules as `require("<its export path>")` instead
 * of serializing it. So when this package is installed (the users' case), the provider handed to
 * dynamic.Resource is the module `pulumi-gpucloud/dynamic/<kind>` itself, and the stored text is one
 * require of it: about 260 bytes. Anywhere else (this repository, whose examples and tests reach the
 * package through a symlink, or a layout Pulumi would map wrongly) it falls back to a small function shim
 * that requires `pulumi-gpucloud/dynamic` at call time: about 2.2 KB, but correct everywhere.
 */
import type * as pulumi from "@pulumi/pulumi";
import * as path from "node:path";
import type { ResourceKind } from "./resources";

/** The package subpath the function shim requires; package.json `exports` maps it to dist/provider/dynamic.js. */
export const IMPLEMENTATION_MODULE = "pulumi-gpucloud/dynamic";

/**
 * The kind's module name: the generated file provider/generated/dynamic/<name>.ts, and the export
 * `pulumi-gpucloud/dynamic/<name>` that package.json's `./dynamic/*` maps to it.
 */
export function kindModule(kind: ResourceKind): string {
  return kind.replace(/(?<=[a-z0-9])([A-Z])/g, "-$1").toLowerCase();
}

type Provider = Required<pulumi.dynamic.ResourceProvider>;

const chosen = new Map<ResourceKind, pulumi.dynamic.ResourceProvider>();

/** The provider to hand to dynamic.Resource for `kind`; the same object on every call, so Pulumi serializes it once. */
export function shimProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  let provider = chosen.get(kind);
  if (!provider) {
    provider = storedAsRequire(kind) ?? functionShim(kind);
    chosen.set(kind, provider);
  }
  return provider;
}

/** The export path the stored text requires when the module form is used. */
export function kindExport(kind: ResourceKind): string {
  return `${IMPLEMENTATION_MODULE}/${kindModule(kind)}`;
}

/**
 * The kind's module, when Pulumi will store it as `require(kindExport(kind))` and the provider server,
 * resolving from the program's folder, will load this very file again; undefined otherwise.
 */
function storedAsRequire(kind: ResourceKind): Provider | undefined {
  const filename = require.resolve(`./generated/dynamic/${kindModule(kind)}`);
  const implementation = require(filename) as Provider;
  const layout = {
    cwd: process.cwd(),
    filename,
    pulumiModuleName,
    resolveFromProgram: (request: string) => require.resolve(request, { paths: [process.cwd()] }),
  };
  return isStoredAsRequire(kindExport(kind), layout) ? implementation : undefined;
}

export interface ModuleLayout {
  /** The Pulumi program's folder: the serializer names modules relative to it, the provider server resolves from it. */
  cwd: string;
  /** Where the kind's module was loaded from (symlinks resolved, as in require.cache). */
  filename: string;
  /** What Pulumi's serializer writes for a module path below node_modules (it consults our package.json `exports`). */
  pulumiModuleName(pathInNodeModules: string): string;
  /** require.resolve from the program's folder; throws when it cannot. */
  resolveFromProgram(request: string): string;
}

/**
 * Mirrors the serializer's rule for captured modules (runtime/closure/createClosure.js in @pulumi/pulumi):
 * the path relative to the program's folder must go through node_modules, what follows the first
 * node_modules must map to `exportPath`, and the provider server must find that export at this file.
 * Any doubt answers false, which costs bytes, never correctness.
 */
export function isStoredAsRequire(exportPath: string, layout: ModuleLayout): boolean {
  const parts = path.relative(layout.cwd, layout.filename).split(path.sep);
  const nodeModules = parts.indexOf("node_modules");
  if (nodeModules < 0) return false;
  try {
    if (layout.pulumiModuleName(parts.slice(nodeModules + 1).join("/")) !== exportPath) return false;
    return layout.resolveFromProgram(exportPath) === layout.filename;
  } catch {
    return false;
  }
}

function pulumiModuleName(pathInNodeModules: string): string {
  // Pulumi's own mapping, so that a package.json or resolution quirk it has is one we see too.
  const closurePackage =
    require("@pulumi/pulumi/runtime/closure/package") as typeof import("@pulumi/pulumi/runtime/closure/package");
  return closurePackage.getModuleFromPath(pathInNodeModules);
}

function functionShim(kind: ResourceKind): Provider {
  // A literal, not IMPLEMENTATION_MODULE: the serialized closure must not capture module variables.
  const impl = (): Provider => require("pulumi-gpucloud/dynamic").providers[kind];
  return {
    configure: (req) => impl().configure(req),
    check: (olds, news) => impl().check(olds, news),
    diff: (id, olds, news) => impl().diff(id, olds, news),
    create: (inputs) => impl().create(inputs),
    read: (id, props) => impl().read(id, props),
    update: (id, olds, news) => impl().update(id, olds, news),
    delete: (id, props) => impl().delete(id, props),
  };
}
