/**
 * The GPU stock room's routes: admin routes only (the API shows no stock).
 */
import type { FastifyInstance } from "fastify";
import { StoreRoom } from "../core/room";
import { parseBody } from "../core/http/validation";
import { stockSettingSchema } from "./setting";
import { type StockRecord, stockStateSchema } from "./state";
import type { StockStore } from "./store";

/**
 * GPU stock: no API route of its own (the API shows no stock), the admin routes that read and set it,
 * and its part of the state. Creates and starts meet it through the instances' store.
 */
export class StockRoom extends StoreRoom<StockRecord[], StockStore> {
  readonly name = "gpu_stock";
  readonly stateSchema = stockStateSchema;

  register(): void {}

  registerAdmin(admin: FastifyInstance): void {
    admin.get("/gpus", async () => ({ gpus: this.store.list() }));
    // {gpu} is a gpu_uuid or a gpu_name, as a person knows the model.
    admin.put<{ Params: { gpu: string } }>("/gpus/:gpu/stock", async (request) =>
      this.store.set(request.params.gpu, parseBody(stockSettingSchema, request.body)),
    );
  }
}
