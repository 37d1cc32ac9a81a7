/**
 * `pulumi-gpucloud/dynamic/idle-close-policy`: this module's exports ARE the IdleClosePolicy provider, so that Pulumi's
 * serializer, which writes a module captured from node_modules as a require() of it, stores the
 * provider as one line (see ../shim.ts).
 */
import { idleClosePolicyProvider } from "../idleClosePolicy";

export = idleClosePolicyProvider;
