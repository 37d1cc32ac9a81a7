/**
 * The plugin as users get it: `npm pack`'s tarball installed in a project folder, then started the two
 * ways Pulumi starts a plugin: the plugin folder through the nodejs language host's `run-plugin` (what
 * `pulumi package add ./node_modules/pulumi-gpucloud/plugin` leads to), and the bin executed directly,
 * each with the logging flags the engine puts before its address.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { installPackedCopy, type InstalledProject } from "../../dev/installed";
import { engineAddressFrom } from "../../provider/native/main";
import { REPO_ROOT } from "../harness";
import { PluginProcess, withoutGpucloudEnv } from "./plugin";

const ENGINE_ARGS = ["--logtostderr", "-v=9", "--tracing", "http://127.0.0.1:1/trace", "127.0.0.1:1"];

const manifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));

describe("the engine's arguments", () => {
  it("takes the address after the logging and tracing flags, and none when there is none", () => {
    expect(engineAddressFrom(ENGINE_ARGS)).toBe("127.0.0.1:1");
    expect(engineAddressFrom(["127.0.0.1:7"])).toBe("127.0.0.1:7");
    expect(engineAddressFrom([])).toBeUndefined();
    expect(engineAddressFrom(["--tracing", "http://x"])).toBeUndefined();
  });
});

describe("the plugin shipped in the package", () => {
  let project: InstalledProject;
  let installed: string;
  beforeAll(async () => {
    project = await installPackedCopy();
    installed = path.join(project.dir, "node_modules", "pulumi-gpucloud");
  }, 60_000);
  afterAll(() => project?.remove());

  it("holds the plugin folder, the schema and the bin", () => {
    const plugin = parse(fs.readFileSync(path.join(installed, "plugin", "PulumiPlugin.yaml"), "utf8"));
    expect(plugin).toEqual({ runtime: "nodejs" });
    const folder = manifest(path.join(installed, "plugin"));
    const root = manifest(REPO_ROOT);
    // The folder is a project of its own, so it names @pulumi/pulumi (the package only peers it): the
    // version this repository tests with, which runs on every Node.js the package supports.
    expect(folder.dependencies).toEqual({
      "@pulumi/pulumi": root.devDependencies["@pulumi/pulumi"],
      "pulumi-gpucloud": root.version,
    });
    expect(fs.existsSync(path.join(installed, "plugin", folder.main))).toBe(true);
    expect(fs.readFileSync(path.join(installed, "schema.json"), "utf8")).toBe(
      fs.readFileSync(path.join(REPO_ROOT, "schema.json"), "utf8"),
    );
    const bin = path.join(installed, manifest(installed).bin["pulumi-resource-gpucloud"]);
    expect(fs.readFileSync(bin, "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  async function servesItsVersion(command: string[]): Promise<void> {
    const plugin = await PluginProcess.start({ command, cwd: project.dir, env: withoutGpucloudEnv() });
    try {
      expect(await plugin.client.pluginVersion()).toBe(manifest(installed).version);
      expect(JSON.parse(await plugin.client.schema()).name).toBe("gpucloud");
      expect(plugin.stdout).toBe(`${plugin.client.port}\n`);
    } finally {
      expect(await plugin.stop("SIGTERM")).toBe(0);
    }
  }

  it("runs from its folder the way Pulumi's nodejs language host runs a plugin", async () => {
    const folder = path.join(installed, "plugin");
    // pulumi-language-nodejs resolves run-plugin from the plugin's folder and passes the folder first.
    const runPlugin = require.resolve("@pulumi/pulumi/cmd/run-plugin", { paths: [folder] });
    await servesItsVersion([process.execPath, runPlugin, folder, ...ENGINE_ARGS]);
  });

  it("runs as the pulumi-resource-gpucloud executable", async () => {
    const bin = path.join(installed, manifest(installed).bin["pulumi-resource-gpucloud"]);
    await servesItsVersion([process.execPath, bin, ...ENGINE_ARGS]);
  });

  it("answers a person's --version and --help and exits, serving nothing", async () => {
    const bin = path.join(installed, manifest(installed).bin["pulumi-resource-gpucloud"]);
    const run = (arg: string) => promisify(execFile)(process.execPath, [bin, arg], { timeout: 30_000 });
    expect((await run("--version")).stdout).toBe(`${manifest(REPO_ROOT).version}\n`);
    const help = (await run("--help")).stdout;
    expect(help).toMatch(/^Usage: pulumi-resource-gpucloud \[ENGINE_ADDRESS\]\n/);
    expect(help).toContain("GPUCLOUD_API_KEY");
  });

  it("runs as the executable started with no arguments at all", async () => {
    const bin = path.join(installed, manifest(installed).bin["pulumi-resource-gpucloud"]);
    await servesItsVersion([process.execPath, bin]);
  });
});
