/**
 * examples/yaml-fleet as a program function for pulumi-gpucloud/testing (./yaml-program.ts runs it): the
 * tests take it through the native front door, the way the Pulumi CLI takes the YAML program.
 */
import * as path from "node:path";
import { REPO_ROOT } from "./self-link";
import { yamlProgram } from "./yaml-program";

export = yamlProgram(path.join(REPO_ROOT, "examples", "yaml-fleet", "Pulumi.yaml"));
