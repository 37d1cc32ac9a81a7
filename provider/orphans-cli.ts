#!/usr/bin/env node
/** `gpucloud-orphans`: lists the cloud's instances that no stack export holds (see orphans.ts). */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { GpuCloudClient, terminalSafeJson, type Instance as CloudInstance } from "../sdk";
import { asStackExport, findOrphans, formatReport, type StackExport } from "./orphans";

const HELP = `Usage: gpucloud-orphans [--json] [EXPORT.json ...]

Lists the GPU cloud's instances that no Pulumi stack knows: compares the cloud's instance list with
\`pulumi stack export\` output (one file per stack; stdin when no file or "-" is given) and flags the
instances a pending create (a provider killed mid-create) probably made.

  pulumi stack export --file prod.json && gpucloud-orphans prod.json
  pulumi stack export | gpucloud-orphans

Environment: GPUCLOUD_BASE_URL (the service's base URL) and GPUCLOUD_API_KEY (the key).
Options:
  --json    print the report as JSON
  --help    show this help
Exit status: 0 when no instance is orphaned, 3 when some are, 1 on an error.
`;

const EXIT_ORPHANS = 3;

function readStdin(): string {
  return readFileSync(0, "utf8");
}

function loadExport(file: string): StackExport {
  const source = file === "-" ? "stdin" : file;
  let text: string;
  try {
    text = file === "-" ? readStdin() : readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`Could not read ${source}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${source} is not JSON. Pass the output of \`pulumi stack export\`.`);
  }
  return asStackExport(parsed, source);
}

function required(env: NodeJS.ProcessEnv, name: string, what: string): string {
  const value = env[name];
  if (!value) throw new Error(`gpucloud-orphans: set ${name} to ${what}.`);
  return value;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { json: { type: "boolean", default: false }, help: { type: "boolean", default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const stacks = (positionals.length > 0 ? positionals : ["-"]).map(loadExport);
  const client = new GpuCloudClient({
    baseUrl: required(env, "GPUCLOUD_BASE_URL", "the service's base URL"),
    apiKey: required(env, "GPUCLOUD_API_KEY", "your API key"),
  });
  try {
    const cloud: CloudInstance[] = [];
    for await (const instance of client.instances.listAll()) cloud.push(instance);
    const report = findOrphans(cloud, stacks);
    // The report holds the cloud's text: printed so a terminal shows it, never obeys it.
    process.stdout.write(values.json ? `${terminalSafeJson(report, 2)}\n` : formatReport(report));
    return report.orphans.length > 0 ? EXIT_ORPHANS : 0;
  } finally {
    await client.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
