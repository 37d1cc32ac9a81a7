// Generated from the resource definitions (provider/resources) by `npm run build`; edit those, not this.
/** `pulumi-gpucloud/dynamic/idle-close-policy`: this module's exports ARE the IdleClosePolicy provider (see provider/shim.ts). */
import { providers } from "../../dynamic";
export = providers.IdleClosePolicy;
