/**
 * A build step after `tsc`: the SDK's published declarations without zod. The SDK validates every answer
 * with a zod schema and derives its types from them (`type Balance = z.infer<typeof BalanceSchema>`), so
 * tsc's declarations import zod, and zod's own declarations fail to compile in a user's project with
 * Pulumi's template tsconfig (no skipLibCheck, no esModuleInterop). Here each such type is written out
 * as the structure the type checker sees, and what remains of zod (the schemas, the plumbing that takes
 * them) leaves the published types; the JavaScript is untouched. The build fails if anything of zod
 * would be left in a published SDK declaration.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "./self-link";

const SDK = path.join(REPO_ROOT, "sdk");
const DIST_SDK = path.join(REPO_ROOT, "dist", "sdk");
const ZOD = /\bz\.|\bZod[A-Z]\w*|["']zod(\/[^"']*)?["']|\$loose\b|\$strip\b/;

/** The expanded type of every type alias of `file` that names zod, by alias name. */
function expandedAliases(program: ts.Program, file: string): Map<string, string> {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const expanded = new Map<string, string>();
  if (!source) return expanded;
  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || !ZOD.test(statement.type.getText(source))) continue;
    const type = checker.getTypeAtLocation(statement.name);
    const text = checker.typeToString(
      type,
      statement,
      ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias,
    );
    if (ZOD.test(text))
      throw new Error(`${statement.name.text} in ${path.basename(file)} expands to zod's types`);
    expanded.set(statement.name.text, text);
  }
  return expanded;
}

/** Removes a class's members that name zod: the SDK's plumbing, which takes schemas. */
function withoutZodMembers(node: ts.ClassDeclaration, text: string, source: ts.SourceFile): string {
  let result = text;
  for (const member of [...node.members].reverse()) {
    if (!ZOD.test(member.getText(source))) continue;
    const start = member.getFullStart() - node.getStart(source);
    const end = member.getEnd() - node.getStart(source);
    result = result.slice(0, start) + result.slice(end);
  }
  return result;
}

/** The declaration file with zod's types expanded or removed. */
function rewrite(declarationFile: string, expanded: Map<string, string>): string {
  const text = fs.readFileSync(declarationFile, "utf8");
  const source = ts.createSourceFile(declarationFile, text, ts.ScriptTarget.Latest, true);
  const parts: string[] = [];
  let last = 0;
  const replace = (node: ts.Node, by: string) => {
    parts.push(text.slice(last, node.getStart(source)), by);
    last = node.getEnd();
  };
  for (const statement of source.statements) {
    const own = statement.getText(source);
    if (!ZOD.test(own)) continue;
    if (ts.isTypeAliasDeclaration(statement) && expanded.has(statement.name.text)) {
      const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      replace(
        statement,
        `${exported ? "export " : ""}type ${statement.name.text} = ${expanded.get(statement.name.text)};`,
      );
    } else if (ts.isClassDeclaration(statement)) {
      replace(statement, withoutZodMembers(statement, own, source));
    } else {
      replace(statement, "");
    }
  }
  parts.push(text.slice(last));
  const result = parts.join("");
  const left = result.split("\n").find((line) => ZOD.test(line));
  if (left !== undefined)
    throw new Error(`${path.relative(REPO_ROOT, declarationFile)} still names zod: ${left.trim()}`);
  return result;
}

function main(): void {
  const sources = fs
    .readdirSync(SDK)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => path.join(SDK, f));
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(REPO_ROOT, "tsconfig.build.json"),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => console.error(d.messageText) },
  );
  if (!config) throw new Error("tsconfig.build.json could not be read");
  const program = ts.createProgram(sources, { ...config.options, noEmit: true });
  for (const file of sources) {
    const declarationFile = path.join(DIST_SDK, path.basename(file).replace(/\.ts$/, ".d.ts"));
    if (!fs.existsSync(declarationFile)) continue;
    fs.writeFileSync(declarationFile, rewrite(declarationFile, expandedAliases(program, file)));
  }
}

main();
