/**
 * The package's type tokens, spelled once (docs/design/contracts.md#the-native-plugin). A resource named
 * `Instance` is `gpucloud:index:Instance` in the schema and through the native plugin, and
 * `pulumi-nodejs:dynamic/gpucloud:Instance` in a state the dynamic providers wrote (Pulumi makes that
 * token from the package name and the type name the resource class hands it).
 */

/** The package's name: the schema's, the plugin's (`pulumi-resource-gpucloud`) and the config keys' (`gpucloud:apiKey`). */
export const PACKAGE = "gpucloud";

/** Where the package's native tokens start: `gpucloud:index:`. */
export const NATIVE_PREFIX = `${PACKAGE}:index:`;

/** Where the types of any dynamic provider start, whatever its package. */
export const DYNAMIC_TYPE_PREFIX = "pulumi-nodejs:dynamic/";

/** Where the package's dynamic tokens start: `pulumi-nodejs:dynamic/gpucloud:`. */
export const DYNAMIC_PREFIX = `${DYNAMIC_TYPE_PREFIX}${PACKAGE}:`;

/** A resource's, component's or function's token in the schema and through the native plugin. */
export function token(name: string): string {
  return `${NATIVE_PREFIX}${name}`;
}

/** A resource's token in a state the dynamic providers wrote. */
export function dynamicToken(name: string): string {
  return `${DYNAMIC_PREFIX}${name}`;
}

/** The tokens one resource has in a state: through either front door. */
export function stateTokens(name: string): readonly string[] {
  return [dynamicToken(name), token(name)];
}

/** The type's name of one of this package's tokens, from either front door; undefined for any other type. */
export function nameOfToken(type: string): string | undefined {
  for (const prefix of [DYNAMIC_PREFIX, NATIVE_PREFIX]) {
    if (type.startsWith(prefix)) return type.slice(prefix.length);
  }
  return undefined;
}
