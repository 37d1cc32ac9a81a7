/**
 * The assets room's routes: POST /assets (a multipart upload) and GET /assets/{asset_id}, parsed and answered
 * over the store.
 */
import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { ApiError, paramError } from "../core/http/errors";
import { ok } from "../core/http/envelope";
import { parseQuery } from "../core/http/validation";
import { StoreRoom, type RoomContext } from "../core/room";
import { MAX_ASSET_BYTES } from "./state";
import { AssetStore, UploadedFile, UploadFields } from "./store";
import { type AssetSnapshot, assetsStateSchema } from "./state";
import { measureUpload } from "./upload";

const assetPath = z.object({ asset_id: z.string().min(1) });
const FIELDS = ["media_type", "purpose", "ttl_hours"] as const;

/** Workflow input assets: POST /assets (multipart) and GET /assets/{asset_id}. */
export class AssetsRoom extends StoreRoom<AssetSnapshot, AssetStore> {
  readonly name = "assets";
  readonly stateSchema = assetsStateSchema;

  constructor(private readonly ctx: RoomContext) {
    super(new AssetStore());
  }

  register(api: FastifyInstance): void {
    // Multipart is parsed only inside this scope; the file limit is enforced while streaming (upload.ts).
    api.register(async (scope) => {
      await scope.register(multipart, {
        limits: { fileSize: MAX_ASSET_BYTES, files: 1, fields: 10, fieldSize: 1024, parts: 20 },
      });
      scope.post("/assets", async (request) => {
        const user = this.ctx.currentUser(request);
        const { file, fields } = await readUpload(request);
        return ok(this.store.create(user, file, fields, this.ctx.clock.now()));
      });
    });

    api.get("/assets/:asset_id", async (request) => {
      const user = this.ctx.currentUser(request);
      const { asset_id } = parseQuery(assetPath, request.params);
      return ok(this.store.get(user, asset_id, this.ctx.clock.now()));
    });
  }
}

async function readUpload(request: FastifyRequest): Promise<{ file: UploadedFile; fields: UploadFields }> {
  if (!request.isMultipart()) throw paramError("body", "must be multipart/form-data with a part named file");
  const values = new Map<string, string>();
  let file: UploadedFile | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === "file") {
        if (part.fieldname !== "file")
          throw paramError(part.fieldname, "is not a file part; send the file in the part named file");
        file = await measureUpload(part.file, part.filename, part.mimetype);
      } else if (part.fieldname === "file") {
        throw paramError("file", "must be a file part with a filename, not a text field");
      } else {
        // Spec lists three text parts; others are ignored as a form post would ignore unknown fields.
        values.set(part.fieldname, String(part.value));
      }
    }
  } catch (error) {
    // Whatever the client still sends is read and dropped, never buffered, so it receives the answer.
    request.raw.unpipe();
    request.raw.resume();
    if (error instanceof ApiError) throw error;
    throw paramError("body", `is not valid multipart/form-data (${(error as Error).message})`);
  }
  if (file === undefined) throw paramError("file", "is required");
  // Spec is silent on empty files; an empty input can feed no workflow, so it is refused.
  if (file.sizeBytes === 0) throw paramError("file", "must not be empty");
  return { file, fields: parseFields(values) };
}

function parseFields(values: ReadonlyMap<string, string>): UploadFields {
  const fields: UploadFields = {};
  for (const name of FIELDS) {
    const value = values.get(name);
    if (value === undefined) continue;
    if (name === "ttl_hours") {
      if (!/^\d+$/.test(value.trim())) throw paramError("ttl_hours", "must be an integer number of hours");
      fields.ttl_hours = Number(value.trim());
    } else {
      fields[name] = value.trim();
    }
  }
  return fields;
}
