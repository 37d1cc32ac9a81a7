/**
 * A Pulumi YAML program of this repository's examples run as a TypeScript program function, so that
 * pulumi-gpucloud/testing can take it through the native front door (the Pulumi CLI, which runs YAML,
 * cannot be installed on these machines). It does what Pulumi YAML does with what the examples use:
 * `config` (declared type and default, read as `<project>:<name>`), `variables` with `fn::invoke`
 * (function, arguments, return), `resources` of the package (type and properties), `outputs`, and
 * `${name.path}` references, whole or inside text; anything else is refused by name, never guessed at.
 * A component type (the schema's `isComponent`, a Fleet) registers as a remote component, as Pulumi YAML
 * registers it, once the harness runs the program through the plugin, which then constructs it.
 */
import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import * as gpucloud from "pulumi-gpucloud";
import { parse } from "yaml";

type Node = Record<string, unknown>;
const NATIVE = "gpucloud:index:";

/** The program function of the YAML program in `file`. */
export function yamlProgram(file: string): () => Promise<Record<string, unknown>> {
  const program = parse(fs.readFileSync(file, "utf8")) as Node;
  for (const key of Object.keys(program)) {
    if (
      !["name", "runtime", "description", "plugins", "config", "variables", "resources", "outputs"].includes(
        key,
      )
    ) {
      throw new Error(`${file}: "${key}" is not run by this YAML runner.`);
    }
  }
  return async () => new YamlRun(program).outputs();
}

class YamlRun {
  private readonly values = new Map<string, unknown>();
  private readonly config: pulumi.Config;

  constructor(private readonly program: Node) {
    this.config = new pulumi.Config(String(program.name));
  }

  outputs(): Record<string, unknown> {
    for (const name of Object.keys(this.section("resources"))) this.value(name);
    return this.resolve(this.program.outputs ?? {}, "outputs") as Record<string, unknown>;
  }

  private section(name: string): Node {
    return (this.program[name] ?? {}) as Node;
  }

  /** A config value, variable or resource by name, made once on first use. */
  private value(name: string): unknown {
    if (this.values.has(name)) return this.values.get(name);
    const made = this.make(name);
    this.values.set(name, made);
    return made;
  }

  private make(name: string): unknown {
    const declared = this.section("config")[name] as { type: string; default?: unknown } | undefined;
    if (declared) return this.configValue(name, declared);
    const variable = this.section("variables")[name] as Node | undefined;
    if (variable) return this.invoke(variable["fn::invoke"] as Node | undefined, `variables.${name}`);
    const resource = this.section("resources")[name] as { type: string; properties?: Node } | undefined;
    if (resource) return this.resource(name, resource);
    throw new Error(`\${${name}} names no config, variable or resource.`);
  }

  private configValue(name: string, declared: { type: string; default?: unknown }): unknown {
    const text = this.config.get(name);
    if (text === undefined) return declared.default;
    return declared.type === "integer" || declared.type === "number" ? Number(text) : text;
  }

  private invoke(call: Node | undefined, where: string): unknown {
    if (!call) throw new Error(`${where}: only fn::invoke variables are run.`);
    const token = String(call.function);
    const form = (gpucloud as unknown as Record<string, unknown>)[`${token.slice(NATIVE.length)}Output`];
    if (!token.startsWith(NATIVE) || typeof form !== "function")
      throw new Error(`${where}: no function ${token}.`);
    const result = form(this.resolve(call.arguments ?? {}, where)) as pulumi.Output<Record<string, unknown>>;
    return call.return === undefined ? result : result.apply((r) => r[String(call.return)]);
  }

  private resource(name: string, declared: { type: string; properties?: Node }): unknown {
    const kind = declared.type.startsWith(NATIVE) ? declared.type.slice(NATIVE.length) : undefined;
    const Resource = kind && (gpucloud as unknown as Record<string, unknown>)[kind];
    if (typeof Resource !== "function")
      throw new Error(`resources.${name}: no resource type ${declared.type}.`);
    const args = this.resolve(declared.properties ?? {}, `resources.${name}`);
    return new (Resource as new (name: string, args: unknown) => unknown)(name, args);
  }

  /** A YAML value with its `${...}` references resolved, as Inputs. */
  private resolve(value: unknown, where: string): unknown {
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${where}[${i}]`));
    if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value as Node);
      if (entries.some(([key]) => key.startsWith("fn::"))) throw new Error(`${where}: builtins are not run.`);
      return Object.fromEntries(entries.map(([key, v]) => [key, this.resolve(v, `${where}.${key}`)]));
    }
    if (typeof value !== "string") return value;
    const whole = /^\$\{([^}]+)\}$/.exec(value);
    if (whole) return this.reference(whole[1]);
    const parts = value.split(/\$\{([^}]+)\}/);
    if (parts.length === 1) return value;
    return pulumi
      .all(parts.map((part, i) => (i % 2 === 1 ? this.reference(part) : part)))
      .apply((p) => p.join(""));
  }

  /** `name.a.b` or `name.a[0]`: the named value, then each property of it. */
  private reference(path: string): unknown {
    const [name, ...steps] = path.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== "");
    const start = this.value(name);
    if (steps.length === 0) return start;
    // A resource's outputs (a component's too) are its properties; anything else is an Output (or a plain
    // value) to look into.
    const [first, ...rest] = steps;
    const get = (v: unknown, step: string) => (v as Record<string, unknown>)[step];
    let output: pulumi.Output<unknown> =
      start instanceof pulumi.Resource
        ? (get(start, first) as pulumi.Output<unknown>)
        : (pulumi.output(start) as pulumi.Output<unknown>).apply((v) => get(v, first));
    for (const step of rest) output = output.apply((v) => get(v, step));
    return output;
  }
}
