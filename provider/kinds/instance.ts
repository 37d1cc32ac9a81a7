/**
 * `pulumi-gpucloud/dynamic/instance`: this module's exports ARE the Instance provider, so that Pulumi's
 * serializer, which writes a module captured from node_modules as a require() of it, stores the
 * provider as one line (see ../shim.ts).
 */
import { instanceProvider } from "../instance";

export = instanceProvider;
