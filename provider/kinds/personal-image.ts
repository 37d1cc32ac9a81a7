/**
 * `pulumi-gpucloud/dynamic/personal-image`: this module's exports ARE the PersonalImage provider, so that Pulumi's
 * serializer, which writes a module captured from node_modules as a require() of it, stores the
 * provider as one line (see ../shim.ts).
 */
import { personalImageProvider } from "../personalImage";

export = personalImageProvider;
