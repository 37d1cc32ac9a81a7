/**
 * Type-checks TypeScript with the compiler options of a project's tsconfig.json, in this process, with
 * the repository's TypeScript: a program imports the package by its name, which resolves as in a user's
 * project (node_modules/pulumi-gpucloud, the self link, to dist/'s declarations: build first).
 *
 * Libraries' declarations are not checked (skipLibCheck): checking @pulumi/pulumi's takes half a minute
 * of CPU per program, and the package's own are checked without it by test/provider/declarations.test.ts
 * and `npm run test:e2e`. Parsed files are shared between the programs of one test file.
 */
import * as path from "node:path";
import * as ts from "typescript";

const parsed = new Map<string, ts.SourceFile | undefined>();

/**
 * The errors of compiling the tsconfig's own files, or `sources` instead (path to text, kept in memory)
 * with its options, one line each as tsc prints them; empty when it compiles.
 */
export function typeErrors(tsconfig: string, sources?: ReadonlyMap<string, string>): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    { noEmit: true, skipLibCheck: true },
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail(d) },
  );
  if (!config) throw new Error(`${tsconfig} could not be read`);
  const host = ts.createCompilerHost(config.options);
  const { getSourceFile } = host;
  host.getSourceFile = (file, version, ...rest) => {
    const text = sources?.get(path.resolve(file));
    if (text !== undefined) return ts.createSourceFile(file, text, version);
    const key = `${file} ${JSON.stringify(version)}`;
    if (!parsed.has(key)) parsed.set(key, getSourceFile.call(host, file, version, ...rest));
    return parsed.get(key);
  };
  if (sources) {
    const { fileExists } = host;
    host.fileExists = (file) => sources.has(path.resolve(file)) || fileExists.call(host, file);
  }
  const roots = sources ? [...sources.keys()] : config.fileNames;
  const program = ts.createProgram({ rootNames: roots, options: config.options, host });
  return [...config.errors, ...ts.getPreEmitDiagnostics(program)].map((d) =>
    ts
      .formatDiagnostic(d, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => path.dirname(tsconfig),
        getNewLine: () => "\n",
      })
      .trim(),
  );
}

function fail(diagnostic: ts.Diagnostic): never {
  throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}
