/**
 * The web console's pages: every user's instances, one instance, one account (its runs, bills, recharges,
 * images and assets) and the faults with the request log.
 */
import { IDLE_PERIODS, STATUS } from "../instances/codes";
import { PLATFORM_IDLE_THRESHOLD, SKIP_THRESHOLD } from "../instances/store";
import type { IdlePolicy, ServerMapEntry, Utilization } from "../instances/store";
import { faultSchema, type Fault } from "../core/controls/faults";
import type { LoggedRequest } from "../core/controls/requestlog";
import { clockTime, cny, relative } from "./format";
import { html, type Html, type Renderable } from "./html";
import { actionForm, consolePaths, hidden, table, type Page, type View } from "./layout";
import { FAULT_NUMBER_FIELDS } from "./actions";
import type { Account, InstanceRow, ModelRun, UserSummary, WorkflowRun } from "./model";

const BUSY = "busy";
const STATUS_KIND: Record<number, string> = {
  [STATUS.RUNNING]: "on",
  [STATUS.STOPPED]: "off",
  [STATUS.STOPPED_LEGACY]: "off",
  [STATUS.STOPPED_ABNORMAL]: "bad",
};

/** `/`: every user's instances, with the power buttons a person reaches for most. */
export function instancesPage(view: View, users: { user: UserSummary; instances: InstanceRow[] }[]): Page {
  return {
    title: "Instances",
    section: "instances",
    body: html`${users.map(({ user, instances }, index) => userInstances(view, user, instances, `user-${index}`))}`,
  };
}

function userInstances(view: View, user: UserSummary, instances: InstanceRow[], id: string): Html {
  const rows = instances.map(
    (i) =>
      html`<tr>
        <th scope="row">${instanceLink(i)}</th>
        <td>${statusOf(i, view.now)}</td>
        <td class="nowrap">${gpuOf(i)}</td>
        <td class="nowrap">${cny(i.hourly_price)}/h</td>
        <td>${idlePolicyOf(i.idle_close)}</td>
        <td>${utilizationOf(i.utilization)}</td>
        <td>${servicesOf(i.server_map)}</td>
        <td>${shutdownOf(i, view.now)}</td>
        <td class="actions">${powerButtons(view, i)}</td>
      </tr>`,
  );
  return html`<section class="user" aria-labelledby="${id}">
    <h2 id="${id}">
      User <b>${user.user}</b>
      <span class="muted">balance ${cny(user.balance)}</span>
      <a href="${consolePaths.account(user.user)}">account, runs and money</a>
    </h2>
    ${table(
      `Instances of ${user.user}`,
      [
        "Instance",
        "Status",
        "GPU",
        "Price",
        "Idle policy",
        "Utilisation",
        "Services",
        "Scheduled shutdown",
        "Actions",
      ],
      rows,
      `${user.user} has no instances: create some with the API or a Pulumi program.`,
    )}
  </section>`;
}

function instanceLink(i: InstanceRow): Html {
  return html`<a href="${consolePaths.instance(i.owner, i.instance_uuid)}">${titleOf(i)}</a>
    <code class="id">${i.instance_uuid}</code>`;
}

function titleOf(i: InstanceRow): Renderable {
  return i.title === "" ? html`<i>untitled</i>` : i.title;
}

function statusOf(i: InstanceRow, now: number): Html {
  const kind = STATUS_KIND[i.status] ?? BUSY;
  return html`<span class="status ${kind}">${i.status_name}</span> <span class="muted">(${i.status})</span> ${
      i.next && html`<span class="next">→ ${i.next.status_name} ${relative(i.next.at, now)}</span>`
    }`;
}

function gpuOf(i: InstanceRow): string {
  return `${i.gpu_nums} × ${i.gpu_name}`;
}

function thresholdOf(value: number): string {
  if (value === SKIP_THRESHOLD) return "not checked";
  if (value === 0) return `≤ ${PLATFORM_IDLE_THRESHOLD} %`;
  return `≤ ${value} %`;
}

function idlePolicyOf(policy: IdlePolicy | null): Html {
  if (!policy) return html`<span class="muted">none</span>`;
  const thresholds = `GPU ${thresholdOf(policy.idle_gpu_threshold)}, memory ${thresholdOf(policy.idle_fb_threshold)}`;
  return html`<span class="nowrap"
      >${policy.destroy ? "destroy" : "stop"} after ${policy.idle_period_minutes} min</span
    >
    idle <small>${thresholds}</small>`;
}

function utilizationOf(gpus: Utilization[]): Html {
  return html`<ul class="plain">
    ${gpus.map(
      (u, index) =>
        html`<li class="nowrap">GPU${gpus.length > 1 ? ` ${index}:` : ""} ${u.gpu} %, memory ${u.fb} %</li>`,
    )}
  </ul>`;
}

function servicesOf(services: ServerMapEntry[]): Html {
  return html`<ul class="plain">
    ${services.map(
      (s) =>
        html`<li>
          ${s.title}${s.ssh_info && html` <i class="muted">password hidden</i>`}
          <small><code>${s.url}</code></small>
        </li>`,
    )}
  </ul>`;
}

function shutdownOf(i: InstanceRow, now: number): Renderable {
  const { enable, shutdown_time } = i.shutdown_regular;
  if (!enable) return html`<span class="muted">none</span>`;
  return `${clockTime(shutdown_time)} (${relative(shutdown_time, now)})`;
}

function instanceFields(i: InstanceRow): Record<string, string> {
  return { user: i.owner, instance_uuid: i.instance_uuid };
}

function powerButtons(view: View, i: InstanceRow): Html[] {
  return [
    actionForm(view, "stop", instanceFields(i), "Stop"),
    actionForm(view, "start", instanceFields(i), "Start"),
    actionForm(view, "restart", instanceFields(i), "Restart"),
  ];
}

/** One instance: every fact the console knows and every action on it. */
export function instancePage(view: View, i: InstanceRow): Page {
  return {
    title: i.title === "" ? `Instance ${i.instance_uuid}` : `Instance ${i.title}`,
    section: i.owner,
    body: html`<p><a href="${consolePaths.home}">← all instances</a></p>
      <div class="columns">
        <section aria-labelledby="facts-title">
          <h2 id="facts-title">Facts</h2>
          ${facts(view, i)}
          <h3>Services</h3>
          ${servicesTable(i.server_map)}
        </section>
        <section aria-labelledby="actions-title">
          <h2 id="actions-title">Actions</h2>
          ${renameForm(view, i)} ${powerForms(view, i)} ${idlePolicyForms(view, i)}
          ${utilizationForm(view, i)}
          <h3>Destroy</h3>
          ${actionForm(view, "destroy", instanceFields(i), "Destroy instance", {
            confirm: `Destroy instance ${i.title || i.instance_uuid}? It is gone for good.`,
            className: "danger",
            returnTo: consolePaths.home,
          })}
        </section>
      </div>`,
  };
}

function facts(view: View, i: InstanceRow): Html {
  const fact = (term: string, value: Renderable) =>
    html`<dt>${term}</dt>
      <dd>${value}</dd>`;
  return html`<dl class="facts">
    ${fact("Title", titleOf(i))} ${fact("Instance", html`<code>${i.instance_uuid}</code>`)}
    ${fact("Owner", i.owner)} ${fact("Status", statusOf(i, view.now))}
    ${fact("Image", html`${i.image_name}:${i.image_tag} <code class="id">${i.image_uuid}</code>`)}
    ${fact("GPU", gpuOf(i))} ${fact("Hourly price", `${cny(i.hourly_price)}/h`)}
    ${fact("Billing", i.charging_type === 2 ? "subscription" : "pay as you go")}
    ${fact("Created", `${clockTime(i.create_time)} (${relative(i.create_time, view.now)})`)}
    ${fact("Last started", i.start_time === 0 ? "never" : clockTime(i.start_time))}
    ${fact("Scheduled shutdown", shutdownOf(i, view.now))} ${fact("Idle policy", idlePolicyOf(i.idle_close))}
    ${fact("Utilisation", utilizationOf(i.utilization))}
    ${fact("Saving an image", saveStatusOf(i.save_image_status))}
  </dl>`;
}

function saveStatusOf(status: number): string {
  return ["never saved", "saving", "saved", "failed"][status] ?? `status ${status}`;
}

function servicesTable(services: ServerMapEntry[]): Html {
  return table(
    "Services of this instance",
    ["Service", "Type", "Address", "Login"],
    services.map(
      (s) =>
        html`<tr>
          <th scope="row">${s.title}</th>
          <td>${s.port_type}/${s.protocol}</td>
          <td><code>${s.url}</code></td>
          <td>
            ${s.ssh_info ? `${s.ssh_info.username}, password hidden (the API gives it to the key's owner)` : "—"}
          </td>
        </tr>`,
    ),
    "No services.",
  );
}

/** A form panel under its own heading, which names the form. */
function panelForm(view: View, action: string, i: InstanceRow, heading: string, fields: Html): Html {
  const id = `${action}-heading`;
  return html`<h3 id="${id}">${heading}</h3>
    <form method="post" action="${consolePaths.action(action)}" class="panel" aria-labelledby="${id}">
      ${hidden({ ...instanceFields(i), return_to: view.path })} ${fields}
    </form>`;
}

function renameForm(view: View, i: InstanceRow): Html {
  return panelForm(
    view,
    "rename",
    i,
    "Rename",
    html`<label for="title">Title</label>
      <input id="title" name="title" type="text" value="${i.title}" autocomplete="off" />
      <button type="submit">Rename</button>`,
  );
}

function powerForms(view: View, i: InstanceRow): Html {
  return html`<h3 id="power-heading">Power and images</h3>
    <div class="panel row" role="group" aria-labelledby="power-heading">
      ${powerButtons(view, i)} ${actionForm(view, "save-image", instanceFields(i), "Save as image")}
    </div>`;
}

function idlePolicyForms(view: View, i: InstanceRow): Html {
  const policy = i.idle_close;
  const period = policy?.idle_period_minutes ?? 30;
  const threshold = (id: string, name: string, label: string, value: number) =>
    html`<label for="${id}">${label}</label>
      <input id="${id}" name="${name}" type="number" min="0" max="100" step="1" value="${value}" />`;
  const periods = IDLE_PERIODS.filter((p) => p > 0).map(
    (p) => html`<option value="${p}" ${p === period ? html`selected` : ""}>${p} minutes</option>`,
  );
  const fields = html`<label for="idle-period">Idle period</label>
    <select id="idle-period" name="idle_period_minutes">
      ${periods}
    </select>
    <label class="check">
      <input type="checkbox" name="destroy" ${policy?.destroy ? html`checked` : ""} /> Destroy instead of stop
    </label>
    ${threshold("idle-gpu", "idle_gpu_threshold", "GPU threshold (%)", policy?.idle_gpu_threshold ?? 0)}
    ${threshold("idle-fb", "idle_fb_threshold", "Memory threshold (%)", policy?.idle_fb_threshold ?? 0)}
    <p class="hint muted">0 is the platform's threshold, 100 skips that check.</p>
    <button type="submit">Set idle policy</button>`;
  return html`${panelForm(view, "idle-policy", i, "Idle policy", fields)}
  ${policy && actionForm(view, "cancel-idle-policy", instanceFields(i), "Cancel idle policy")}`;
}

function utilizationForm(view: View, i: InstanceRow): Html {
  const first = i.utilization[0] ?? { gpu: 0, fb: 0 };
  const fields = html`<label for="util-gpu">GPU utilisation (%)</label>
    <input id="util-gpu" name="gpu" type="number" min="0" max="100" step="1" value="${first.gpu}" />
    <label for="util-fb">Memory utilisation (%)</label>
    <input id="util-fb" name="fb" type="number" min="0" max="100" step="1" value="${first.fb}" />
    <p class="hint muted">Every GPU of the instance reports these; idle policies compare them.</p>
    <button type="submit">Set utilisation</button>`;
  return panelForm(view, "utilization", i, "GPU utilisation", fields);
}

/** `/console/users/:user`: a user's money (balance, bills, recharges, runs) and stored things. */
export function accountPage(view: View, account: Account): Page {
  return {
    title: `Account ${account.user}`,
    section: account.user,
    body: html`<dl class="facts summary">
        <dt>Balance</dt>
        <dd><b>${cny(account.balance)}</b></dd>
        <dt>API keys</dt>
        <dd>
          ${account.keys.map(
            (k) => html`<code>${k.fingerprint}</code>${k.disabled && html` <i>disabled</i>`} `,
          )}
          <span class="muted">(fingerprints; keys are never shown)</span>
        </dd>
      </dl>
      <h2>Workflow runs</h2>
      ${table(
        shownOf("workflow runs", account.workflowRuns),
        ["Run", "Workflow", "Status", "Settlement", "Pre-deducted", "Charged", "Released", "Submitted"],
        account.workflowRuns.items.map(workflowRunRow),
        "No workflow runs.",
      )}
      <h2>Model runs</h2>
      ${table(
        shownOf("model runs", account.modelRuns),
        ["Run", "Model", "Status", "Settlement", "Money movements", "Submitted"],
        account.modelRuns.items.map(modelRunRow),
        "No model runs.",
      )}
      <h2>Bills</h2>
      ${table(
        "Bill records, newest first",
        ["Bill", "Kind", "Resource", "Amount", "Period", "Recorded"],
        account.bills.map(
          (b) =>
            html`<tr>
              <th scope="row"><code>${b.bill_id}</code></th>
              <td>${b.kind}</td>
              <td><code>${b.resource_id}</code></td>
              <td class="money">${cny(b.amount)}</td>
              <td>${clockTime(b.start_time)} to ${clockTime(b.end_time)}</td>
              <td>${clockTime(b.create_time)}</td>
            </tr>`,
        ),
        "No bills yet: instances are billed by the hour, runs when they settle.",
      )}
      <h2>Recharges</h2>
      ${table(
        "Recharge records, newest first",
        ["Order", "Amount", "Ordered", "Paid"],
        account.recharges.map(
          (r) =>
            html`<tr>
              <th scope="row"><code>${r.trade_number}</code></th>
              <td class="money">${cny(r.amount)}</td>
              <td>${clockTime(r.trade_time)}</td>
              <td>${clockTime(r.pay_time)}</td>
            </tr>`,
        ),
        "No recharges.",
      )}
      <h2>Personal images</h2>
      ${table(
        "Personal images",
        ["Image", "Status", "Size", "Made from", "Created"],
        account.images.map(
          (image) =>
            html`<tr>
              <th scope="row">${image.title} <code class="id">${image.uuid}</code></th>
              <td>${saveStatusOf(image.save_image_status)}</td>
              <td>${image.size} GB</td>
              <td>${image.remark}</td>
              <td>${clockTime(image.create_time)}</td>
            </tr>`,
        ),
        "No personal images: save an instance as an image to make one.",
      )}
      <h2>Assets</h2>
      ${table(
        "Uploaded assets that have not expired",
        ["Asset", "File", "Type", "Size", "Expires"],
        account.assets.map(
          (a) =>
            html`<tr>
              <th scope="row"><code>${a.asset_id}</code></th>
              <td>${a.original_filename}</td>
              <td>${a.media_type} (${a.mime_type})</td>
              <td>${a.size_bytes} bytes</td>
              <td>${a.expires_at}</td>
            </tr>`,
        ),
        "No assets.",
      )}`,
  };
}

function shownOf(what: string, list: { total: number; items: unknown[] }): string {
  return list.total > list.items.length
    ? `The newest ${list.items.length} of ${list.total} ${what}`
    : `${what[0].toUpperCase()}${what.slice(1)}, newest first`;
}

function workflowRunRow(run: WorkflowRun): Html {
  return html`<tr>
    <th scope="row"><code>${run.run_order_id}</code></th>
    <td>${run.workflow_id}</td>
    <td>${run.run_status}</td>
    <td>${run.settlement_status} (${run.freeze_status})</td>
    <td class="money">${cny(run.quote_amount)}</td>
    <td class="money">${cny(run.final_amount)}</td>
    <td class="money">${cny(run.released_amount)}</td>
    <td>${run.created_at}</td>
  </tr>`;
}

function modelRunRow(run: ModelRun): Html {
  const movements = run.events.filter((e) => ["reserved", "settled", "released"].includes(e.event_type));
  return html`<tr>
    <th scope="row"><code>${run.run_id}</code></th>
    <td>${run.model}</td>
    <td>${run.status}${run.error_message && html` <span class="muted">${run.error_message}</span>`}</td>
    <td>${run.settlement_status}</td>
    <td>
      <ul class="plain">
        ${movements.map((e) => html`<li>${e.event_type} ${cny(e.amount)} <span class="muted">${e.created_at}</span></li>`)}
      </ul>
    </td>
    <td>${run.created_at}</td>
  </tr>`;
}

/** What each fault kind does, for the kind picker; a kind not listed shows its own name. */
const FAULT_KINDS: Record<string, string> = {
  http_500: "HTTP 500, system error",
  http_429: "HTTP 429, rate limited",
  http_503: "HTTP 503, unavailable",
  reset: "connection reset before any work",
  drop_after_commit: "work done, then the connection dropped unanswered",
  http_500_after_commit: "work done, then answered HTTP 500, system error",
  delay: "answer delayed by the milliseconds below",
  late_commit: "held for the milliseconds below, then carried out",
  nulls_after_commit: "work done, then answered with the records' optional fields null",
  gzip_after_commit: "work done, then answered gzip-compressed, with Content-Encoding: gzip",
  unlabelled_gzip_after_commit: "work done, then answered gzip-compressed, without Content-Encoding",
  html_after_commit: "work done, then answered HTTP 200 with a gateway's HTML page",
  truncated_after_commit: "work done, then answered with JSON cut off half way",
  total_counts_hidden: "a list's total counts one item more than the list shows",
};

/** Labels and starting values of the fault form's numeric fields. */
const FAULT_NUMBER_LABELS: Record<string, [string, string]> = {
  count: ["Calls to fail", "1"],
  ms: ["Milliseconds (delay, late_commit)", ""],
  probability: ["Probability, 0 to 1 (instead of a count)", ""],
};

/** `/console/faults`: pending faults, the form that arms one, and the request log. */
export function faultsPage(
  view: View,
  faults: Fault[],
  requests: { total: number; latest: LoggedRequest[] },
  apiPaths: string[],
): Page {
  return {
    title: "Faults and requests",
    section: "faults",
    body: html`<div class="columns">
        <section aria-labelledby="pending-title">
          <h2 id="pending-title">Pending faults</h2>
          ${table(
            "Faults armed for the next API calls",
            ["Path", "Kind", ...FAULT_NUMBER_FIELDS.map((name) => FAULT_NUMBER_LABELS[name][0]), "Action"],
            faults.map((fault, index) => faultRow(view, fault, index)),
            "No pending faults.",
          )}
          ${faults.length > 0 && actionForm(view, "clear-faults", {}, "Clear all faults")}
        </section>
        <section aria-labelledby="inject-title">
          <h2 id="inject-title">Inject a fault</h2>
          ${injectForm(view, apiPaths)}
        </section>
      </div>
      <h2>Request log</h2>
      ${requests.total > 0 && actionForm(view, "clear-requests", {}, "Clear request log")}
      ${table(
        requests.total > requests.latest.length
          ? `The newest ${requests.latest.length} of ${requests.total} API calls`
          : "API calls, newest first",
        ["Time", "Method", "Path", "Key", "Status"],
        requests.latest.map(
          (r) =>
            html`<tr>
              <td>${clockTime(r.time)}</td>
              <td>${r.method}</td>
              <th scope="row"><code>${r.path}</code></th>
              <td>${r.key === null ? html`<i>none</i>` : html`<code>${r.key}</code>`}</td>
              <td>${r.status ?? html`<i>dropped</i>`}</td>
            </tr>`,
        ),
        "No API calls since the last reset or clear.",
      )}`,
  };
}

function faultRow(view: View, fault: Fault, index: number): Html {
  const numbers = fault as Record<string, unknown>;
  return html`<tr>
    <th scope="row"><code>${fault.path}</code></th>
    <td>${fault.kind}</td>
    ${FAULT_NUMBER_FIELDS.map((name) => html`<td>${numbers[name] === undefined ? "—" : String(numbers[name])}</td>`)}
    <td>
      ${actionForm(
        view,
        "clear-fault",
        { index: String(index), path: fault.path, kind: fault.kind },
        html`Clear <span class="sr-only">${fault.kind} on ${fault.path}</span>`,
      )}
    </td>
  </tr>`;
}

function injectForm(view: View, apiPaths: string[]): Html {
  const kinds = faultSchema.shape.kind.options;
  return html`<form method="post" action="${consolePaths.action("inject-fault")}" class="panel">
    ${hidden({ return_to: view.path })}
    <label for="fault-path">API path</label>
    <input
      id="fault-path"
      name="path"
      type="text"
      list="api-paths"
      placeholder="/instance/create_by_pod"
      required
    />
    <datalist id="api-paths">${apiPaths.map((p) => html`<option value="${p}"></option>`)}</datalist>
    <label for="fault-kind">Kind</label>
    <select id="fault-kind" name="kind">
      ${kinds.map((kind) => html`<option value="${kind}">${kind}: ${FAULT_KINDS[kind] ?? kind}</option>`)}
    </select>
    ${FAULT_NUMBER_FIELDS.map((name) => {
      const [label, value] = FAULT_NUMBER_LABELS[name];
      return html`<label for="${`fault-${name}`}">${label}</label>
        <input id="${`fault-${name}`}" name="${name}" type="text" inputmode="decimal" value="${value}" />`;
    })}
    <button type="submit">Inject fault</button>
  </form>`;
}
