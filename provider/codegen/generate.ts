/**
 * `npm run build` runs this after compiling: it writes the package schema (schema.json), the public
 * resource classes and data source functions (provider/generated/) and the reference pages (docs/resources/, docs/data-sources/)
 * from the definitions, and compiles again when the TypeScript it wrote changed.
 * test/provider/schema.test.ts keeps the checked-in files equal to what it writes.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { COMPONENTS } from "../components";
import { DATA_SOURCES } from "../datasources/functions";
import { packageRoot, packageVersion } from "../package-root";
import { RESOURCES } from "../resources";
import { kindExport, kindModule as kindModuleName } from "../shim";
import { componentSchemas, dataSourceSchemas, resourceSchemas } from "./json-schema";
import { packageSchema, type PackageSchema, type SchemaSources } from "./package-schema";
import { DATA_SOURCE_PAGES, referencePages, RESOURCE_PAGES } from "./reference/pages";
import { dataSourcesModule, kindModule, resourcesModule } from "./typescript-source";

/** The kind modules, one per resource. */
const GENERATED_DYNAMIC = "provider/generated/dynamic";

/** The folders whose every file is generated: a file the generator no longer writes is removed. */
export const GENERATED_FOLDERS = [GENERATED_DYNAMIC, RESOURCE_PAGES, DATA_SOURCE_PAGES];

/** The command that writes the generated files, for messages that ask for it. */
export const REGENERATE = "npm run build";

function schemaSources(root: string): SchemaSources {
  return {
    version: packageVersion(root),
    resources: RESOURCES.map((definition) => ({ definition, schemas: resourceSchemas(definition) })),
    components: COMPONENTS.map((definition) => ({ definition, schemas: componentSchemas(definition) })),
    dataSources: DATA_SOURCES.map((definition) => ({ definition, schemas: dataSourceSchemas(definition) })),
  };
}

export function buildPackageSchema(root: string = packageRoot()): PackageSchema {
  return packageSchema(schemaSources(root));
}

/** Every generated file, by path relative to the package root (.prettierignore leaves their layout to this). */
export function generatedFiles(root: string = packageRoot()): Map<string, string> {
  const sources = schemaSources(root);
  const schema = packageSchema(sources);
  return new Map<string, string>([
    ["schema.json", `${JSON.stringify(schema, null, 2)}\n`],
    ["provider/generated/resources.ts", resourcesModule(sources.resources, sources.components)],
    ["provider/generated/data-sources.ts", dataSourcesModule(sources.dataSources)],
    ...RESOURCES.map((d): [string, string] => [
      `${GENERATED_DYNAMIC}/${kindModuleName(d.name)}.ts`,
      kindModule(d.name, kindExport(d.name)),
    ]),
    ...referencePages({
      schema,
      resources: sources.resources,
      components: sources.components,
      dataSources: sources.dataSources,
    }),
  ]);
}

/** Files in the generated folders that the generator does not write (any more). */
function strayFiles(root: string, files: Map<string, string>): string[] {
  return GENERATED_FOLDERS.flatMap((folder) => {
    const dir = path.join(root, folder);
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .map((entry) => `${folder}/${entry}`)
      .filter((file) => !files.has(file));
  });
}

/**
 * How the checked-in files differ from what the generator writes, one line per file, each saying which
 * command puts it right; empty when they are equal.
 */
export function generatedDrift(
  root: string = packageRoot(),
  files: Map<string, string> = generatedFiles(root),
): string[] {
  const differing = [...files]
    .filter(([file, text]) => {
      const target = path.join(root, file);
      return !fs.existsSync(target) || fs.readFileSync(target, "utf8") !== text;
    })
    .map(([file]) => `${file} is not what the definitions generate: run \`${REGENERATE}\` to write it`);
  const strays = strayFiles(root, files).map(
    (file) => `${file} is no longer generated: run \`${REGENERATE}\` to remove it`,
  );
  return [...differing, ...strays];
}

/** Writes what differs and removes what is no longer generated; returns the paths it changed. */
export function writeGeneratedFiles(
  root: string = packageRoot(),
  files: Map<string, string> = generatedFiles(root),
): string[] {
  const changed: string[] = [];
  for (const [file, text] of files) {
    const target = path.join(root, file);
    if (fs.existsSync(target) && fs.readFileSync(target, "utf8") === text) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
    changed.push(file);
  }
  for (const file of strayFiles(root, files)) {
    fs.rmSync(path.join(root, file));
    changed.push(file);
  }
  return changed;
}

function main(): void {
  const root = packageRoot();
  const changed = writeGeneratedFiles(root);
  for (const file of changed) process.stdout.write(`generated ${file}\n`);
  if (changed.some((file) => file.endsWith(".ts"))) {
    // The compile before this one used the previous classes; dist/ must hold these.
    execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
      cwd: root,
      stdio: "inherit",
    });
  }
}

if (require.main === module) main();
