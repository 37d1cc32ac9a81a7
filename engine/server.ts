/**
 * One dynamic-provider server process (`@pulumi/pulumi/cmd/dynamic-provider`) and a gRPC client that
 * speaks to it the way the Pulumi engine does (DESIGN §7), plus the wire details the engine handles:
 * the unknown sentinel, secret wrapping, and the package link the serialized shim resolves against.
 */
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";

/** The string the engine sends in place of a value that is not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The signature key and value the engine wraps a secret in on the wire (DESIGN §7). */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/** The package root: found by walking up, so it is the same from engine/*.ts (jest) and dist/engine/*.js. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, "utf8")).name === "pulumi-gpucloud") {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`no pulumi-gpucloud package.json above ${from}`);
  }
}

export const REPO_ROOT = packageRoot(__dirname);
const SERVER_SCRIPT = path.join(
  path.dirname(require.resolve("@pulumi/pulumi/package.json")),
  "cmd",
  "dynamic-provider",
  "index.js",
);

export type Props = Record<string, unknown>;

export interface WrappedSecret {
  [SECRET_SIG_KEY]: string;
  value: unknown;
}

/** Wraps a value the way the engine marks a secret (config secrets arrive like this in Configure). */
export function secret(value: unknown): WrappedSecret {
  return { [SECRET_SIG_KEY]: SECRET_SIG_VALUE, value };
}

export function isSecret(value: unknown): value is WrappedSecret {
  return typeof value === "object" && value !== null && (value as Props)[SECRET_SIG_KEY] === SECRET_SIG_VALUE;
}

/**
 * The server reports acceptSecrets=false, so the engine unwraps secrets before every CRUD call;
 * the harness does the same. It also drops undefined, which the engine never sends.
 */
export function toWire(value: unknown): unknown {
  if (isSecret(value)) return toWire(value.value);
  if (Array.isArray(value)) return value.map(toWire);
  if (typeof value === "object" && value !== null) {
    const out: Props = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = toWire(v);
    }
    return out;
  }
  return value;
}

function struct(props: Props): Struct {
  return Struct.fromJavaScript(toWire(props) as Parameters<typeof Struct.fromJavaScript>[0]);
}

function plain(s: Struct | undefined): Props {
  return (s?.toJavaScript() ?? {}) as Props;
}

export interface CheckFailure {
  property: string;
  reason: string;
}
export interface CheckResult {
  inputs: Props;
  failures: CheckFailure[];
}
export type DiffChanges = "none" | "some" | "unknown";
export interface DiffResult {
  changes: DiffChanges;
  replaces: string[];
  deleteBeforeReplace: boolean;
}
export interface CreateResult {
  id: string;
  outputs: Props;
}
export interface ReadResult {
  id: string;
  outputs: Props;
  inputs?: Props;
}

/**
 * The linked package the dynamic-provider server resolves `require("pulumi-gpucloud/...")` against
 * (DESIGN §7): `node_modules/pulumi-gpucloud -> ..` at the repository root, made when absent.
 */
export function ensurePackageLink(root: string = REPO_ROOT): void {
  const link = path.join(root, "node_modules", "pulumi-gpucloud");
  try {
    const target = fs.readlinkSync(link);
    if (path.resolve(path.dirname(link), target) === root) return;
    fs.unlinkSync(link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  try {
    fs.symlinkSync("..", link, "dir");
  } catch (err) {
    // Another jest worker may have made the same link a moment ago.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

function newestSource(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .reduce((newest, f) => Math.max(newest, fs.statSync(path.join(dir, f)).mtimeMs), 0);
}

/**
 * The shim requires the compiled package, so tests of real providers need `npm run build` first,
 * and a build older than the sources would test yesterday's code.
 */
export function assertBuilt(root: string = REPO_ROOT): void {
  const entry = path.join(root, "dist", "provider", "dynamic.js");
  const rebuild =
    "Run `npm run build` first: the serialized provider requires pulumi-gpucloud/dynamic from dist/.";
  if (!fs.existsSync(entry))
    throw new Error(`The provider server needs the compiled package: ${entry} is missing. ${rebuild}`);
  const built = fs.statSync(entry).mtimeMs;
  const newest = Math.max(newestSource(path.join(root, "provider")), newestSource(path.join(root, "sdk")));
  if (newest > built)
    throw new Error(`The compiled package in dist/ is older than provider/ or sdk/. ${rebuild}`);
}

export interface ProviderServerOptions {
  /** Working directory of the server: where the serialized provider resolves its `require`s. */
  cwd?: string;
  /** Environment of the server process (default: this process's, without GPUCLOUD_* variables). */
  env?: NodeJS.ProcessEnv;
}

function defaultEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("GPUCLOUD_")) env[k] = v;
  }
  return env;
}

type Callback<Res> = (err: grpc.ServiceError | null, res: Res) => void;

/** Servers still running: killed when this process exits, however it exits, so none outlives its caller. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function track(child: ChildProcess): void {
  live.add(child);
  child.once("exit", () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}

/**
 * One dynamic-provider server process (`@pulumi/pulumi/cmd/dynamic-provider`) and a gRPC client to it,
 * speaking to it the way the Pulumi engine does.
 */
export class ProviderServer {
  private stderrText = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly client: provrpc.ResourceProviderClient,
  ) {
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderrText += chunk.toString();
    });
  }

  static async start(options: ProviderServerOptions = {}): Promise<ProviderServer> {
    // The engine address is never dialled by the dynamic-provider server (DESIGN §7).
    const child = spawn(process.execPath, [SERVER_SCRIPT, "127.0.0.1:1"], {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? defaultEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    track(child);
    const port = await new Promise<string>((resolve, reject) => {
      const lines = readline.createInterface({ input: child.stdout! });
      let stderr = "";
      child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
      lines.once("line", (line) => resolve(line.trim()));
      child.once("exit", (code) =>
        reject(new Error(`provider server exited (${code}) before printing its port: ${stderr}`)),
      );
      child.once("error", reject);
    });
    const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new ProviderServer(child, client);
  }

  /** What the server wrote to stderr so far (its console.error of provider failures). */
  get stderr(): string {
    return this.stderrText;
  }

  async stop(): Promise<void> {
    this.client.close();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill();
    await exited;
  }

  private call<Res>(invoke: (callback: Callback<Res>) => unknown): Promise<Res> {
    return new Promise((resolve, reject) => {
      invoke((err, res) => {
        // The gRPC error stays the cause: its metadata carries details such as ErrorResourceInitFailed.
        if (err) reject(new Error(err.details || err.message, { cause: err }));
        else resolve(res);
      });
    });
  }

  /** Configure with the stack config, fully qualified keys; pass secrets through `secret()`. */
  async configure(config: Props): Promise<{ acceptSecrets: boolean }> {
    const req = new provproto.ConfigureRequest();
    req.setArgs(Struct.fromJavaScript(config as Parameters<typeof Struct.fromJavaScript>[0]));
    req.setAcceptsecrets(true);
    const res = await this.call<provproto.ConfigureResponse>((cb) => this.client.configure(req, cb));
    return { acceptSecrets: res.getAcceptsecrets() };
  }

  async check(urn: string, olds: Props, news: Props): Promise<CheckResult> {
    const req = new provproto.CheckRequest();
    req.setUrn(urn);
    req.setOlds(struct(olds));
    req.setNews(struct(news));
    const res = await this.call<provproto.CheckResponse>((cb) => this.client.check(req, cb));
    return {
      inputs: plain(res.getInputs()),
      failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  async diff(urn: string, id: string, olds: Props, news: Props): Promise<DiffResult> {
    const req = new provproto.DiffRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setOlds(struct(olds));
    req.setNews(struct(news));
    const res = await this.call<provproto.DiffResponse>((cb) => this.client.diff(req, cb));
    const kinds = provproto.DiffResponse.DiffChanges;
    const changes = res.getChanges();
    return {
      changes: changes === kinds.DIFF_SOME ? "some" : changes === kinds.DIFF_NONE ? "none" : "unknown",
      replaces: res.getReplacesList(),
      deleteBeforeReplace: res.getDeletebeforereplace(),
    };
  }

  async create(urn: string, inputs: Props): Promise<CreateResult> {
    const req = new provproto.CreateRequest();
    req.setUrn(urn);
    req.setProperties(struct(inputs));
    const res = await this.call<provproto.CreateResponse>((cb) => this.client.create(req, cb));
    return { id: res.getId(), outputs: plain(res.getProperties()) };
  }

  async read(urn: string, id: string, outputs: Props, inputs: Props): Promise<ReadResult> {
    const req = new provproto.ReadRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(struct(outputs));
    req.setInputs(struct(inputs));
    const res = await this.call<provproto.ReadResponse>((cb) => this.client.read(req, cb));
    return {
      id: res.getId(),
      outputs: plain(res.getProperties()),
      inputs: res.getInputs() ? plain(res.getInputs()) : undefined,
    };
  }

  async update(urn: string, id: string, olds: Props, news: Props): Promise<Props> {
    const req = new provproto.UpdateRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setOlds(struct(olds));
    req.setNews(struct(news));
    const res = await this.call<provproto.UpdateResponse>((cb) => this.client.update(req, cb));
    return plain(res.getProperties());
  }

  async delete(urn: string, id: string, outputs: Props): Promise<void> {
    const req = new provproto.DeleteRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(struct(outputs));
    await this.call((cb) => this.client.delete(req, cb));
  }
}
