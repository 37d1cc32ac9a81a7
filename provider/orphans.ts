/**
 * Orphan finder: the cloud's instances that no stack knows. A provider killed during a create leaves
 * Pulumi with a pending "creating" operation and no id, while the instance may exist and bill; this
 * compares the cloud's instance list with `pulumi stack export` output and names every instance no
 * Instance resource holds, flagging those a pending create probably made. Pure logic: no I/O here.
 */

import { terminalSafe } from "../sdk/terminal-safe";
import { isPendingId } from "./resources/instance/lost-create";
import { stateTokens } from "./tokens";

/** An Instance as the state keeps it: through the dynamic providers, or through the native plugin. */
export const INSTANCE_TYPES: readonly string[] = stateTokens("Instance");

function isInstance(resource: StackResource | undefined): boolean {
  return resource?.type !== undefined && INSTANCE_TYPES.includes(resource.type);
}

/** The part of `pulumi stack export` (version 3) this reads; every other field is ignored. */
export interface StackResource {
  urn?: string;
  type?: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

export interface StackExport {
  deployment?: {
    resources?: StackResource[] | null;
    pending_operations?: { resource?: StackResource; type?: string }[] | null;
  };
}

/** What the finder reads of an instance the cloud lists (a record of the SDK's instances.listAll()). */
export interface ListedInstance {
  instance_uuid: string;
  status: number;
  title?: string;
  gpu_uuid?: string;
  gpu_name?: string;
  gpu_nums?: number;
  image_uuid?: string;
  create_time?: number;
}

export interface PendingCreate {
  urn: string;
  stack: string;
  inputs: Record<string, unknown>;
  /**
   * True for a record the provider kept (id `pending-create:...`): the next up, refresh or destroy of its
   * stack resolves it and adopts what it made. False for the engine's pending operation, which nothing resolves.
   */
  recorded: boolean;
  /** Instances the record named as possibly its own. */
  candidates: string[];
}

export interface Orphan {
  instanceUuid: string;
  status: number;
  title: string;
  gpuName: string;
  gpuNums: number | null;
  createTime: number | null;
  /** URNs of pending Instance creates whose inputs this instance matches: it is probably theirs. */
  pendingCreates: string[];
  /** Those of them the provider recorded in the state: the stack's next up, refresh or destroy resolves them. */
  recordedBy: string[];
}

export interface OrphanReport {
  /** Instances the cloud lists. */
  cloud: number;
  /** Instance ids the exports hold. */
  known: number;
  pendingCreates: PendingCreate[];
  orphans: Orphan[];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** `urn:pulumi:STACK::PROJECT::TYPE::NAME` → STACK. */
function stackOf(urn: string): string {
  return /^urn:pulumi:([^:]+)::/.exec(urn)?.[1] ?? "";
}

/** Every way a stack holds an instance: the resource id, its instanceUuid output, an adopted uuid. */
function instanceIdsOf(resource: StackResource): string[] {
  return [resource.id, resource.outputs?.instanceUuid, resource.inputs?.adoptInstanceUuid].flatMap((v) => {
    const id = text(v);
    return id && !isPendingId(id) ? [id] : [];
  });
}

/** The instances a pending record named as possibly its own (its `pendingCreate.candidates`). */
function candidatesOf(resource: StackResource): string[] {
  const record = resource.outputs?.pendingCreate as { candidates?: { instanceUuid?: unknown }[] } | undefined;
  return (Array.isArray(record?.candidates) ? record.candidates : []).flatMap((c) => {
    const id = text(c?.instanceUuid);
    return id ? [id] : [];
  });
}

/** A state file of `pulumi-gpucloud/testing` (`stateFile`): its resources, without the engine's layout. */
interface TestingStateFile {
  secretsProvider: unknown;
  resources: StackResource[];
}

function isTestingStateFile(value: unknown): value is TestingStateFile {
  const file = value as Partial<TestingStateFile> | null;
  return (
    typeof file === "object" && file !== null && "secretsProvider" in file && Array.isArray(file.resources)
  );
}

/**
 * The stack export in `value`, or the same of a `pulumi-gpucloud/testing` state file (whose runs may
 * reach the live cloud too); throws with what is wrong otherwise (the first thing a user gets wrong).
 */
export function asStackExport(value: unknown, source: string): StackExport {
  if (isTestingStateFile(value)) {
    const resources = value.resources.map(({ urn, type, id, inputs, outputs }) => ({
      urn,
      type,
      id,
      inputs,
      outputs,
    }));
    return { deployment: { resources } };
  }
  const deployment = (value as StackExport | null)?.deployment;
  if (typeof deployment !== "object" || deployment === null || Array.isArray(deployment)) {
    throw new Error(
      `${source} is neither the output of \`pulumi stack export\` (it has no "deployment" object) nor a ` +
        "state file of pulumi-gpucloud/testing. Run `pulumi stack export --file stack.json` in the stack's " +
        "project and pass that file.",
    );
  }
  return value as StackExport;
}

export function knownInstanceIds(stacks: StackExport[]): Set<string> {
  const ids = new Set<string>();
  for (const e of stacks) {
    const resources = [
      ...(e.deployment?.resources ?? []),
      ...(e.deployment?.pending_operations ?? []).flatMap((op) => (op.resource ? [op.resource] : [])),
    ];
    for (const resource of resources) {
      if (isInstance(resource)) instanceIdsOf(resource).forEach((id) => ids.add(id));
    }
  }
  return ids;
}

export function pendingCreates(stacks: StackExport[]): PendingCreate[] {
  return stacks.flatMap((e) => [
    ...(e.deployment?.pending_operations ?? []).flatMap((op) =>
      op.type === "creating" && isInstance(op.resource) && op.resource?.urn
        ? [pendingCreate(op.resource, op.resource.urn, false)]
        : [],
    ),
    ...(e.deployment?.resources ?? []).flatMap((r) =>
      isInstance(r) && r.urn && isPendingId(text(r.id) ?? "") ? [pendingCreate(r, r.urn, true)] : [],
    ),
  ]);
}

function pendingCreate(resource: StackResource, urn: string, recorded: boolean): PendingCreate {
  return {
    urn,
    stack: stackOf(urn),
    inputs: resource.inputs ?? {},
    recorded,
    candidates: candidatesOf(resource),
  };
}

/**
 * Whether `instance` could be what this pending create made: same GPU model and count, same image when
 * created from one, and the program's title once the provider got as far as setting it.
 */
function couldBeFrom(instance: ListedInstance, pending: PendingCreate): boolean {
  if (pending.candidates.includes(instance.instance_uuid)) return true;
  const { gpuUuid, gpuNums, imageUuid, title } = pending.inputs;
  const same = (cloudValue: unknown, wanted: unknown) =>
    wanted === undefined || cloudValue === undefined || cloudValue === wanted;
  return (
    same(instance.gpu_uuid, gpuUuid) &&
    same(instance.gpu_nums, gpuNums) &&
    same(instance.image_uuid, imageUuid) &&
    (!instance.title || same(instance.title, title))
  );
}

export function findOrphans(cloud: ListedInstance[], stacks: StackExport[]): OrphanReport {
  const known = knownInstanceIds(stacks);
  const pending = pendingCreates(stacks);
  const orphans = cloud
    .filter((i) => !known.has(i.instance_uuid))
    .map((i) => {
      const matching = pending.filter((p) => couldBeFrom(i, p));
      return {
        instanceUuid: i.instance_uuid,
        status: i.status,
        title: i.title ?? "",
        gpuName: i.gpu_name ?? "",
        gpuNums: i.gpu_nums ?? null,
        createTime: i.create_time ?? null,
        pendingCreates: matching.map((p) => p.urn),
        recordedBy: matching.filter((p) => p.recorded).map((p) => p.urn),
      };
    })
    .sort(
      (a, b) => (a.createTime ?? 0) - (b.createTime ?? 0) || a.instanceUuid.localeCompare(b.instanceUuid),
    );
  return { cloud: cloud.length, known: known.size, pendingCreates: pending, orphans };
}

/** The API keeps titles to 50 characters; a longer one is cut, so one instance cannot widen the table. */
const MAX_CELL_CHARS = 60;

/** A plain-text table of the orphans and what to do with each. */
export function formatReport(report: OrphanReport): string {
  if (report.orphans.length === 0) {
    return `No orphaned instances: every one of the ${report.cloud} instances in the cloud is held by a stack.\n`;
  }
  // A recorded pending create that several instances could be: its stack cannot tell which is its own
  // and asks a person (the provider's own message on refresh says the same).
  const claimants = new Map<string, number>();
  for (const o of report.orphans)
    for (const urn of o.recordedBy) claimants.set(urn, (claimants.get(urn) ?? 0) + 1);
  const ambiguous = (o: Orphan) => o.recordedBy.some((urn) => (claimants.get(urn) ?? 0) > 1);
  // The cloud's text (an id, a title, a GPU name) and the exports' (URNs) are anyone's, and a terminal
  // obeys the control characters in them (a title could clear the screen and print "No orphans."):
  // every cell shows them escaped.
  const rows = report.orphans.map((o) => [
    terminalSafe(o.instanceUuid, MAX_CELL_CHARS),
    String(o.status),
    `${o.gpuNums ?? "?"} x ${terminalSafe(o.gpuName, MAX_CELL_CHARS) || "?"}`,
    terminalSafe(o.title, MAX_CELL_CHARS) || "-",
    o.createTime === null ? "-" : new Date(o.createTime * 1000).toISOString(),
    terminalSafe(
      ambiguous(o)
        ? `one of several instances the recorded pending create of ${o.recordedBy.join(", ")} could have made: its stack cannot tell which`
        : o.recordedBy.length > 0
          ? `recorded pending create of ${o.recordedBy.join(", ")}: resolved by its stack's next up, refresh or destroy`
          : o.pendingCreates.length > 0
            ? `pending create of ${o.pendingCreates.join(", ")}`
            : "no stack knows it",
    ),
  ]);
  const header = ["INSTANCE", "STATUS", "GPU", "TITLE", "CREATED", "NOTE"];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) =>
    cells
      .map((text, c) => text.padEnd(widths[c]))
      .join("  ")
      .trimEnd();
  return [
    `${report.orphans.length} of the ${report.cloud} instances in the cloud are held by no stack:`,
    line(header),
    ...rows.map(line),
    "",
    ...(report.orphans.some((o) => o.recordedBy.length > 0 && !ambiguous(o))
      ? [
          "Leave a recorded pending create's instance alone: the next up, refresh or destroy of its stack",
          "finds it and adopts it (or destroys it, for destroy). Destroying it by hand makes up create another.",
        ]
      : []),
    ...(report.orphans.some(ambiguous)
      ? [
          "Several instances could be one recorded pending create: title or destroy those that are not that",
          "stack's, then run `pulumi refresh`; or set adoptInstanceUuid on that Instance to the right one and run",
          "`pulumi up`.",
        ]
      : []),
    ...(report.orphans.some((o) => o.recordedBy.length === 0)
      ? [
          "Keep one: set adoptInstanceUuid to its uuid on the Instance resource that should hold it and run",
          "`pulumi up` (for the engine's pending create, clear it first: `pulumi refresh --clear-pending-creates`).",
          "Drop one: destroy it in the console or with client.instances.destroy(uuid); it bills until then.",
        ]
      : []),
    "",
  ].join("\n");
}
