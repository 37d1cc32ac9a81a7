/**
 * `npm run build` runs this after compiling: it writes the package schema (schema.json) and the public
 * resource classes (provider/generated/) from the definitions, and compiles again when the TypeScript it
 * wrote changed. test/provider/schema.test.ts keeps the checked-in files equal to what it writes.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { dataSources } from "../datasources/functions";
import { packageRoot, packageVersion } from "../package-root";
import { RESOURCES } from "../resources";
import { kindExport, kindModule as kindModuleName } from "../shim";
import { dataSourceShapes } from "./data-source-shapes";
import { resourceSchemas } from "./json-schema";
import { packageSchema, type PackageSchema } from "./package-schema";
import { kindModule, resourcesModule } from "./typescript-source";

/** The folder whose every file is generated (kind modules of removed resources are deleted). */
export const GENERATED_DYNAMIC = "provider/generated/dynamic";

export function buildPackageSchema(root: string = packageRoot()): PackageSchema {
  return packageSchema({
    version: packageVersion(root),
    resources: RESOURCES.map((definition) => ({ definition, schemas: resourceSchemas(definition) })),
    dataSources: dataSourceShapes(
      path.join(root, "provider", "datasources", "index.ts"),
      Object.keys(dataSources),
    ),
  });
}

/** Every generated file, by path relative to the package root (.prettierignore leaves their layout to this). */
export function generatedFiles(root: string = packageRoot()): Map<string, string> {
  const resources = RESOURCES.map((definition) => ({ definition, schemas: resourceSchemas(definition) }));
  return new Map<string, string>([
    ["schema.json", `${JSON.stringify(buildPackageSchema(root), null, 2)}\n`],
    ["provider/generated/resources.ts", resourcesModule(resources)],
    ...RESOURCES.map((d): [string, string] => [
      `${GENERATED_DYNAMIC}/${kindModuleName(d.name)}.ts`,
      kindModule(d.name, kindExport(d.name)),
    ]),
  ]);
}

/** Writes what differs (and removes stale kind modules); returns the paths it changed. */
export function writeGeneratedFiles(root: string = packageRoot()): string[] {
  const files = generatedFiles(root);
  const changed: string[] = [];
  for (const [file, text] of files) {
    const target = path.join(root, file);
    if (fs.existsSync(target) && fs.readFileSync(target, "utf8") === text) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
    changed.push(file);
  }
  for (const entry of fs.readdirSync(path.join(root, GENERATED_DYNAMIC))) {
    const file = `${GENERATED_DYNAMIC}/${entry}`;
    if (files.has(file)) continue;
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
