/**
 * The GPU stock room's store: free cards per GPU model, the cards instances hold, and the occasional refusal,
 * asked by every create and start; nothing of HTTP.
 */
import type { GpuModel } from "../catalogue/entries";
import type { CatalogueStore } from "../catalogue/store";
import { ApiError, businessError, paramError } from "../core/http/errors";
import { SeededRandom } from "../core/random";
import { StateProblem } from "../core/state/schema";
import type { StockRecord } from "./state";

/**
 * What a person or a test sets for one GPU model: the cards free now (null for unlimited), and how
 * likely a create or start is refused although cards are free (a cloud short of it now and then),
 * repeatable under `seed`.
 */
export interface StockSetting {
  free: number | null;
  refuse_probability?: number;
  seed?: number;
}

/** One GPU model's stock as the admin API shows it. */
export interface StockView {
  gpu_uuid: string;
  gpu_name: string;
  /** Cards free now; null for unlimited. Never below 0, even when more are in use than the stock. */
  free: number | null;
  in_use: number;
  refuse_probability: number;
  seed?: number;
}

/** The model a request asks cards of, as the instance names it (a model may have left the catalogue). */
export interface AskedModel {
  gpu_uuid: string;
  gpu_name: string;
}

interface Stock {
  cards: number | null;
  refuse_probability: number;
  seed: number | null;
  draw: () => number;
  random?: SeededRandom;
}

/**
 * GPU stock (docs/design/contracts.md#gpu-stock): the cards of each model the cloud has, and the rule that a
 * create or start needs as many free. The API shows no stock, so the emulator models it where the spec
 * is silent. Which cards are in use is never kept here: it is counted from the instances every time
 * (an instance holds its cards from create or start until it is stopped or destroyed), so no path that
 * holds or releases cards can leave a count behind. What is kept is the whole stock of a model; what
 * people set and see is its free cards, the stock less the cards in use.
 */
export class StockStore {
  private stocks = new Map<string, Stock>();

  constructor(
    private readonly catalogue: CatalogueStore,
    /** The stock the emulator starts (and resets) with, by gpu_uuid (the `gpuStock` option, resolved). */
    private readonly seeded: ReadonlyMap<string, StockSetting>,
    /** The cards in use per gpu_uuid, counted from the instances. */
    private readonly cardsInUse: () => ReadonlyMap<string, number>,
  ) {
    this.reset();
  }

  /**
   * Admits a create or start that needs `cards` cards of `model`, or refuses it with code 1 naming the
   * model: nothing is made, charged or changed then (the caller asks before it does anything).
   */
  admit(model: AskedModel, cards: number): void {
    const stock = this.stocks.get(model.gpu_uuid);
    if (stock === undefined) return;
    const free = this.freeOf(stock, model.gpu_uuid);
    if (free !== null && free < cards) {
      throw businessError(
        `no free ${model.gpu_name} cards: ${cards} asked, ${free} free; try another GPU model, fewer cards or later`,
      );
    }
    if (stock.refuse_probability > 0 && stock.draw() < stock.refuse_probability) {
      throw businessError(
        `no free ${model.gpu_name} cards: ${cards} asked, none free at the moment; try another GPU model or later`,
      );
    }
  }

  /** Every model of the catalogue with its stock. */
  list(): StockView[] {
    return this.catalogue.gpus().map((gpu) => this.view(gpu));
  }

  /** Sets a model's stock (by gpu_uuid or gpu_name) and answers its new view; the cards in use stay held. */
  set(uuidOrName: string, setting: StockSetting): StockView {
    const gpu = this.modelNamed(uuidOrName);
    this.apply(gpu.gpu_uuid, setting);
    return this.view(gpu);
  }

  /** The seeded settings again, as free cards now: after a restore, for the models the options name. */
  applySeeded(): void {
    for (const [gpuUuid, setting] of this.seeded) this.apply(gpuUuid, setting);
  }

  snapshot(): StockRecord[] {
    return [...this.stocks].map(([gpuUuid, stock]) => ({
      gpu_uuid: gpuUuid,
      cards: stock.cards,
      refuse_probability: stock.refuse_probability,
      seed: stock.seed,
      draw_state: stock.random?.state ?? null,
    }));
  }

  restore(state: StockRecord[]): void {
    this.stocks = new Map(
      state.map((r) => [r.gpu_uuid, stockOf(r.cards, r.refuse_probability, r.seed, r.draw_state)]),
    );
  }

  /** A stock of a model the catalogue does not have could never apply: the document is refused. */
  checkState(state: StockRecord[]): void {
    state.forEach((record, index) => {
      if (this.catalogue.gpu(record.gpu_uuid) === undefined) {
        throw new StateProblem(`[${index}].gpu_uuid`, `no GPU model ${record.gpu_uuid} in the catalogue`);
      }
    });
  }

  reset(): void {
    this.stocks.clear();
    for (const [gpuUuid, setting] of this.seeded) this.stocks.set(gpuUuid, settingOf(setting, setting.free));
  }

  private apply(gpuUuid: string, setting: StockSetting): void {
    const cards = setting.free === null ? null : setting.free + (this.cardsInUse().get(gpuUuid) ?? 0);
    if (cards === null && !setting.refuse_probability) this.stocks.delete(gpuUuid);
    else this.stocks.set(gpuUuid, settingOf(setting, cards));
  }

  private view(gpu: GpuModel): StockView {
    const stock = this.stocks.get(gpu.gpu_uuid);
    const inUse = this.cardsInUse().get(gpu.gpu_uuid) ?? 0;
    const view: StockView = {
      gpu_uuid: gpu.gpu_uuid,
      gpu_name: gpu.gpu_name,
      free: stock === undefined ? null : this.freeOf(stock, gpu.gpu_uuid),
      in_use: inUse,
      refuse_probability: stock?.refuse_probability ?? 0,
    };
    if (stock?.seed !== null && stock?.seed !== undefined) view.seed = stock.seed;
    return view;
  }

  private freeOf(stock: Stock, gpuUuid: string): number | null {
    if (stock.cards === null) return null;
    return Math.max(0, stock.cards - (this.cardsInUse().get(gpuUuid) ?? 0));
  }

  private modelNamed(uuidOrName: string): GpuModel {
    const found = this.catalogue.gpuCalled(uuidOrName);
    if (!("problem" in found)) return found.gpu;
    // A model not there answers as a missing resource does; a name several models share is a bad parameter.
    if (found.missing) throw new ApiError(404, -1, found.problem);
    throw paramError("gpu", found.problem);
  }
}

function settingOf(setting: StockSetting, cards: number | null): Stock {
  const seed = setting.seed ?? null;
  return stockOf(cards, setting.refuse_probability ?? 0, seed, seed);
}

/** A stock whose seeded draws stand at `drawState` (null: unseeded, Math.random). */
function stockOf(
  cards: number | null,
  refuseProbability: number,
  seed: number | null,
  drawState: number | null,
): Stock {
  const random = drawState === null ? undefined : new SeededRandom(drawState);
  return {
    cards,
    refuse_probability: refuseProbability,
    seed,
    random,
    draw: random === undefined ? Math.random : () => random.next(),
  };
}
