/**
 * The web console's GPU stock page (`/console/gpus`).
 */
import type { StockView } from "../stock/store";
import { html, type Html } from "./html";
import { consolePaths, hidden, table, type Page, type View } from "./layout";

/**
 * `/console/gpus`: every GPU model's stock, the cards instances hold and a form per model to set it by
 * hand, as the cloud's other tenants would change it (drift that a fleet's next start meets).
 */
export function stockPage(view: View, stock: StockView[]): Page {
  return {
    title: "GPU stock",
    section: "gpus",
    body: html`<p>
        A create or start needing more cards of a model than are free is refused (code 1), naming the model.
        Instances hold their cards from create or start until they are stopped or destroyed.
      </p>
      ${table(
        "GPU models and their cards",
        ["GPU model", "In use", "Free", "Refused at random", "Set the stock"],
        stock.map((gpu) => stockRow(view, gpu)),
        "The catalogue has no GPU models.",
      )}`,
  };
}

function stockRow(view: View, gpu: StockView): Html {
  const id = `stock-${gpu.gpu_uuid}`;
  return html`<tr>
    <th scope="row">${gpu.gpu_name} <code class="id">${gpu.gpu_uuid}</code></th>
    <td>${gpu.in_use}</td>
    <td>${gpu.free === null ? html`<span class="muted">unlimited</span>` : gpu.free}</td>
    <td>${gpu.refuse_probability === 0 ? html`<span class="muted">never</span>` : refusalOf(gpu)}</td>
    <td>
      <form method="post" action="${consolePaths.action("gpu-stock")}" class="row">
        ${hidden({ gpu_uuid: gpu.gpu_uuid, return_to: view.path })}
        <label for="${`${id}-free`}">Free cards <span class="sr-only">of ${gpu.gpu_name}</span></label>
        <input
          id="${`${id}-free`}"
          name="free"
          type="text"
          inputmode="numeric"
          size="5"
          value="${gpu.free === null ? "" : String(gpu.free)}"
          placeholder="unlimited"
        />
        <label for="${`${id}-probability`}">Refuse with probability</label>
        <input
          id="${`${id}-probability`}"
          name="refuse_probability"
          type="text"
          inputmode="decimal"
          size="5"
          value="${String(gpu.refuse_probability)}"
        />
        <button type="submit">Set <span class="sr-only">the stock of ${gpu.gpu_name}</span></button>
      </form>
    </td>
  </tr>`;
}

function refusalOf(gpu: StockView): string {
  const share = `${Math.round(gpu.refuse_probability * 1000) / 10} % of creates and starts`;
  return gpu.seed === undefined ? share : `${share} (seed ${gpu.seed})`;
}
