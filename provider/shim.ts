/**
 * The provider stored in state (`__provider`) for every gpucloud resource: a few lines that capture only
 * the resource kind and require the implementation by the package's name at call time (DESIGN §3, §7).
 * Nothing else may be captured: the text must stay small and the same across versions of the package.
 */
import type * as pulumi from "@pulumi/pulumi";

export type ResourceKind = "Instance" | "IdleClosePolicy" | "PersonalImage";

/** The package subpath the shim requires; package.json `exports` maps it to dist/provider/dynamic.js. */
export const IMPLEMENTATION_MODULE = "pulumi-gpucloud/dynamic";

export function shimProvider(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  // A literal, not IMPLEMENTATION_MODULE: the serialized closure must not capture module variables.
  const impl = (): Required<pulumi.dynamic.ResourceProvider> =>
    require("pulumi-gpucloud/dynamic").providers[kind];
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
