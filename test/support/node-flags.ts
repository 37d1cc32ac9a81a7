/**
 * Node.js flags for the processes tests start to run Pulumi programs. Node.js 26 lists its experimental
 * `node:ffi` among the built-in modules, and @pulumi/pulumi's function serializer (which every dynamic
 * resource goes through) loads each built-in module once, so such a process prints FFI's
 * ExperimentalWarning on stderr (docs/troubleshooting.md). Nothing of ours uses FFI: where Node.js has
 * the module, the flag leaves it out, as users are told to do.
 */
export const WITHOUT_FFI: readonly string[] = process.allowedNodeEnvironmentFlags.has("--no-experimental-ffi")
  ? ["--no-experimental-ffi"]
  : [];
