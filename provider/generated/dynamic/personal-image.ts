// Generated from the resource definitions (provider/resources) by `npm run build`; edit those, not this.
/** `pulumi-gpucloud/dynamic/personal-image`: this module's exports ARE the PersonalImage provider (see provider/shim.ts). */
import { providers } from "../../dynamic";
export = providers.PersonalImage;
