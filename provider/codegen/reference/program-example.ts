/**
 * A page's example as a whole Pulumi TypeScript program: the body a definition or a doc comment's
 * `@example` gives, inside the `export = async () => { ... }` Pulumi's Node.js runtime calls (what it
 * returns becomes the stack outputs). In a CommonJS project, as examples/fleet is, top-level `await` does
 * not compile; inside the function it does.
 */
import { codeBlock } from "./markdown";

/** What the page says of the setting its example compiles in (the reference pages' test compiles it there). */
export const EXAMPLE_SETTING =
  "A whole program: the `index.ts` of a TypeScript Pulumi project with `pulumi-gpucloud` installed and " +
  "the tsconfig.json of [examples/fleet](../../examples/fleet) (CommonJS, strict).";

export function programExample(body: readonly string[]): string {
  const code = body.join("\n");
  const imports = [
    ...(/\bpulumi\./.test(code) ? ['import * as pulumi from "@pulumi/pulumi";'] : []),
    'import * as gpucloud from "pulumi-gpucloud";',
  ];
  const indented = code.split("\n").map((line) => (line === "" ? "" : `  ${line}`));
  return codeBlock("ts", [...imports, "", "export = async () => {", ...indented, "};"].join("\n"));
}
