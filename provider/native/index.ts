/** `pulumi-gpucloud/native`: the native plugin, for the plugin folder's program and for harnesses that run it in process. */
export { runPlugin, engineAddressFrom } from "./main";
export { serveNativeProvider, type NativeProvider, type NativeProviderOptions } from "./server";
