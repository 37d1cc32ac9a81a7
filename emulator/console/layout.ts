/**
 * The web console's frame: its addresses, the page document around each page's live part, and the tables and
 * forms pages are built of.
 */
import { clockTime } from "./format";
import { html, type Html, type Renderable } from "./html";

/** Every console address. The console owns `/` and `/console/...`; the API and admin API keep theirs. */
export const consolePaths = {
  home: "/",
  account: (user: string) => `/console/users/${encodeURIComponent(user)}`,
  instance: (user: string, uuid: string) =>
    `/console/users/${encodeURIComponent(user)}/instances/${encodeURIComponent(uuid)}`,
  faults: "/console/faults",
  gpus: "/console/gpus",
  action: (name: string) => `/console/actions/${name}`,
  signIn: "/console/sign-in",
  script: "/console/assets/console.js",
  styles: "/console/assets/console.css",
};

/**
 * Pages are scripts-from-self only: even if some text escaped its escaping, the browser would not run it.
 * No other site may frame them (the actions' refusal of other sites is core/http/access.ts's).
 */
export const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** What every page knows about where it is drawn. */
export interface View {
  /** The page's own path, where actions return. */
  path: string;
  now: number;
  users: string[];
}

export interface Page {
  title: string;
  /** Which navigation entry is this page: "instances", "gpus", "faults" or a user. */
  section: string;
  body: Html;
}

export interface Messages {
  notice?: string;
  problem?: string;
}

/**
 * The whole document: header, navigation, messages and the live part that the page script refreshes;
 * `version` names the live part's content, so the script replaces it only when it changed.
 */
export function documentOf(page: Page, view: View, messages: Messages, version: string): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${page.title} · gpucloud emulator</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${consolePaths.styles}" />
        <script src="${consolePaths.script}" defer></script>
      </head>
      <body>
        <header class="top">
          <p class="brand"><a href="${consolePaths.home}">gpucloud emulator</a> <span>console</span></p>
          ${navigation(page, view)}
          ${actionForm(view, "reset", {}, "Reset emulator", {
            confirm: "Reset the emulator to its seed? Every instance, run, balance change and fault goes.",
            className: "danger",
            returnTo: consolePaths.home,
          })}
        </header>
        <div class="messages">
          <p id="notice" role="status">${messages.notice}</p>
          <p id="problem" role="alert">${messages.problem}</p>
          <p id="connection"></p>
        </div>
        <main id="live" data-version="${version}">${liveOf(page, view)}</main>
      </body>
    </html> `;
}

/** The part of a page that changes with the emulator's state; the page script fetches it alone. */
export function liveOf(page: Page, view: View): Html {
  return html`<div class="page-head">
      <h1>${page.title}</h1>
      ${clockPanel(view)}
    </div>
    ${page.body}`;
}

function navigation(page: Page, view: View): Html {
  const entry = (href: string, section: string, label: Renderable) =>
    html`<li>
      <a href="${href}" ${page.section === section ? html`aria-current="page"` : ""}>${label}</a>
    </li>`;
  return html`<nav aria-label="Console pages">
    <ul>
      ${entry(consolePaths.home, "instances", "Instances")} ${entry(consolePaths.gpus, "gpus", "GPU stock")}
      ${view.users.map((user) => entry(consolePaths.account(user), user, html`Account <b>${user}</b>`))}
      ${entry(consolePaths.faults, "faults", "Faults and requests")}
    </ul>
  </nav>`;
}

const QUICK_ADVANCES: [number, string][] = [
  [60, "+1 min"],
  [600, "+10 min"],
  [3600, "+1 h"],
  [86400, "+1 day"],
];

function clockPanel(view: View): Html {
  return html`<section class="clock" aria-labelledby="clock-title">
    <h2 id="clock-title">Simulated clock</h2>
    <p class="now">
      <time datetime="${new Date(view.now * 1000).toISOString()}">${clockTime(view.now)}</time> UTC
      <span class="muted">(Unix ${view.now})</span>
    </p>
    <form method="post" action="${consolePaths.action("advance")}" class="row">
      ${hidden({ return_to: view.path })}
      <label for="advance-seconds">Seconds to advance</label>
      <input id="advance-seconds" name="seconds" type="number" min="1" step="1" value="60" required />
      <button type="submit">Advance clock</button>
    </form>
    <div class="row" role="group" aria-label="Advance the clock by">
      ${QUICK_ADVANCES.map(([seconds, label]) =>
        actionForm(view, "advance", { seconds: String(seconds) }, label, { className: "quiet" }),
      )}
    </div>
  </section>`;
}

export function hidden(fields: Record<string, string>): Html[] {
  return Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
}

/** A one-button form posting one console action; it comes back to the page it was on. */
export function actionForm(
  view: View,
  action: string,
  fields: Record<string, string>,
  label: Renderable,
  options: { confirm?: string; className?: string; returnTo?: string } = {},
): Html {
  return html`<form
    method="post"
    action="${consolePaths.action(action)}"
    class="inline"
    ${options.confirm ? html`data-confirm="${options.confirm}"` : ""}
  >
    ${hidden({ ...fields, return_to: options.returnTo ?? view.path })}
    <button type="submit" class="${options.className ?? ""}">${label}</button>
  </form>`;
}

/** A table with a caption and column headers, or a sentence when there are no rows. */
export function table(caption: string, headers: string[], rows: Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table>
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        ${headers.map((h) => html`<th scope="col">${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
