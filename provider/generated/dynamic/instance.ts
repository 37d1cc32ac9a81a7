// Generated from the resource definitions (provider/resources) by `npm run build`; edit those, not this.
/** `pulumi-gpucloud/dynamic/instance`: this module's exports ARE the Instance provider (see provider/shim.ts). */
import { providers } from "../../dynamic";
export = providers.Instance;
