/**
 * The engine starts the plugin for every preview, update and refresh, so what it loads before it serves is
 * paid on each: its resources, data sources and config need @pulumi/pulumi's protocol classes, never the
 * SDK's index (about 770 modules, 0.8 CPU-s), which only Construct loads, when it runs a component.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { assertBuilt, REPO_ROOT } from "../../dev/self-link";

it("serves without loading @pulumi/pulumi's index", () => {
  assertBuilt();
  const plugin = path.join(REPO_ROOT, "dist", "provider", "native", "index.js");
  const loaded = execFileSync(
    process.execPath,
    ["-e", `require(${JSON.stringify(plugin)}); console.log(JSON.stringify(Object.keys(require.cache)))`],
    { encoding: "utf8" },
  );
  const modules = JSON.parse(loaded) as string[];
  expect(
    modules.some((file) => file.endsWith(path.join("@pulumi", "pulumi", "proto", "provider_pb.js"))),
  ).toBe(true);
  expect(modules.filter((file) => file.endsWith(path.join("@pulumi", "pulumi", "index.js")))).toEqual([]);
});
