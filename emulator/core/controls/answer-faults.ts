/**
 * Faults that carry the call out and then change its answer on the way out, as a proxy, a gateway or
 * the live service itself has been seen to (docs/design/live-service-notes.md#instance-life): the work
 * is done, only the answer differs. The server applies them last, after the change is saved.
 */
import { gzipSync } from "node:zlib";

export const ANSWER_FAULT_KINDS = [
  "nulls_after_commit",
  "gzip_after_commit",
  "unlabelled_gzip_after_commit",
  "html_after_commit",
  "truncated_after_commit",
  "total_counts_hidden",
] as const;

export type AnswerFaultKind = (typeof ANSWER_FAULT_KINDS)[number];

export function isAnswerFault(kind: string): kind is AnswerFaultKind {
  return (ANSWER_FAULT_KINDS as readonly string[]).includes(kind);
}

/**
 * The fields each kind of record may lack (docs/design/cloud-api.md#instance-record: the title "when
 * set", server_url and server_map only in list and info, the rest not promised by any answer), keyed by
 * a field only that kind of record has. nulls_after_commit sends these as null wherever a record has them.
 */
const OPTIONAL_FIELDS: readonly { marker: string; fields: readonly string[] }[] = [
  {
    marker: "instance_uuid",
    fields: [
      "title",
      "start_time",
      "server_url",
      "server_map",
      "save_image_status",
      "charging_type",
      "shutdown_regular",
      "image_name",
      "image_tag",
      "gpu_name",
    ],
  },
  {
    marker: "layer_count",
    fields: [
      "title",
      "remark",
      "layer_count",
      "size",
      "pod_uuid",
      "pod_tag",
      "save_image_status",
      "create_time",
    ],
  },
  { marker: "pod_tag", fields: ["remark", "pod_tag", "price"] },
  { marker: "components", fields: ["components", "size", "created_at", "updated_at"] },
  {
    marker: "asset_uri",
    fields: [
      "id",
      "url",
      "content_url",
      "signed_url",
      "mime_type",
      "size_bytes",
      "expires_at",
      "original_filename",
    ],
  },
  {
    marker: "run_order_id",
    fields: [
      "workflow_id",
      "revision_id",
      "task_id",
      "prompt_id",
      "error_code",
      "error_message",
      "created_at",
    ],
  },
  {
    marker: "run_id",
    fields: [
      "request_id",
      "endpoint",
      "provider",
      "gateway_task_id",
      "error_code",
      "error_message",
      "created_at",
    ],
  },
];

/** Instances (or items) a list's `total` counts under total_counts_hidden beyond those it lists. */
export const HIDDEN_IN_TOTAL = 1;

/** What a gateway in front of the cloud answers with HTTP 200 instead of passing the answer on. */
export const GATEWAY_PAGE =
  "<!doctype html><html><head><title>502 Bad Gateway</title></head>" +
  "<body><h1>502 Bad Gateway</h1><p>The upstream answer could not be passed on.</p></body></html>";

/** Headers and status a rewritten answer needs, and its body. */
export interface Rewritten {
  status?: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** The answer `payload` (the JSON the route sent) as the fault `kind` changes it. */
export function rewriteAnswer(kind: AnswerFaultKind, payload: string): Rewritten {
  switch (kind) {
    case "nulls_after_commit":
      return { headers: {}, body: editData(payload, nullOptionalFields) };
    case "total_counts_hidden":
      return { headers: {}, body: editData(payload, countHidden) };
    case "gzip_after_commit":
      return { headers: { "content-encoding": "gzip" }, body: gzipSync(payload) };
    case "unlabelled_gzip_after_commit":
      return { headers: {}, body: gzipSync(payload) };
    case "html_after_commit":
      return { status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: GATEWAY_PAGE };
    case "truncated_after_commit":
      // Short by half, with a Content-Length that matches: a complete HTTP answer whose JSON breaks off.
      return { headers: {}, body: payload.slice(0, Math.floor(payload.length / 2)) };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The payload with its envelope's `data` changed by `edit`; an answer without data passes unchanged. */
function editData(payload: string, edit: (data: Record<string, unknown>) => void): string {
  const answer: unknown = JSON.parse(payload);
  if (!isRecord(answer) || !isRecord(answer.data)) return payload;
  edit(answer.data);
  return JSON.stringify(answer);
}

/** `data` itself and each record in its lists. */
function recordsOf(data: Record<string, unknown>): Record<string, unknown>[] {
  const listed = Object.values(data).flatMap((value) => (Array.isArray(value) ? value.filter(isRecord) : []));
  return [data, ...listed];
}

function nullOptionalFields(data: Record<string, unknown>): void {
  for (const record of recordsOf(data)) {
    const kind = OPTIONAL_FIELDS.find(({ marker }) => Object.hasOwn(record, marker));
    for (const field of kind?.fields ?? []) if (Object.hasOwn(record, field)) record[field] = null;
  }
}

function countHidden(data: Record<string, unknown>): void {
  if (typeof data.total === "number") data.total += HIDDEN_IN_TOTAL;
}
