/** Where the package's own files are (package.json, schema.json, the plugin folder), from source (jest) and from dist/ alike. */
import * as fs from "node:fs";
import * as path from "node:path";

const NAME = "pulumi-gpucloud";

/** The package root: found by walking up to the package.json named pulumi-gpucloud. */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, "utf8")).name === NAME) {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`no ${NAME} package.json above ${from}`);
  }
}

/** The package's version, as its package.json states it. */
export function packageVersion(root: string = packageRoot()): string {
  return (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string })
    .version;
}
