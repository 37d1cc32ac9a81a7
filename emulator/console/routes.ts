import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { toApiError } from "../core/envelope";
import { ApiError, notFound } from "../core/errors";
import type { Emulator } from "../server";
import { API_BASE, BODY_LIMIT } from "../server";
import { CONSOLE_ACTIONS, type Form } from "./actions";
import { html } from "./html";
import { consolePaths, documentOf, liveOf, type Messages, type Page, type View } from "./layout";
import { ConsoleModel } from "./model";
import { accountPage, faultsPage, instancePage, instancesPage } from "./pages";
import { CONSOLE_SCRIPT } from "./script";
import { CONSOLE_STYLES } from "./styles";

/**
 * Pages are scripts-from-self only: even if some text escaped its escaping, the browser would not run it.
 * Console actions come from the console's own pages: a form on another site cannot post to them.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/**
 * The web console (DESIGN §5): HTML pages at `/` and `/console/...` over a ConsoleModel. Handlers only
 * parse and answer. Its onRoute hook must be added before the API's routes, to list their paths for the
 * fault form.
 */
export function registerConsole(app: FastifyInstance, emulator: Emulator): void {
  const apiPaths = new Set<string>();
  app.addHook("onRoute", (route) => {
    // Faults match exact paths, so a parametric route (/assets/:asset_id) cannot be offered.
    if (route.url.startsWith(`${API_BASE}/`) && !route.url.includes(":")) {
      apiPaths.add(route.url.slice(API_BASE.length));
    }
  });
  app.register(async (scope) => consoleRoutes(scope, new ConsoleModel(emulator), apiPaths));
}

function consoleRoutes(scope: FastifyInstance, model: ConsoleModel, apiPaths: Set<string>): void {
  // Forms post urlencoded bodies; only the console's routes accept them.
  scope.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  scope.setErrorHandler((error, request, reply) => {
    const problem = toApiError(error, BODY_LIMIT);
    const page: Page = {
      title: problem.status === 404 ? "Not found" : "Something went wrong",
      section: "",
      body: html`<p role="alert">${problem.message}</p>
        <p><a href="${consolePaths.home}">Back to the instances</a></p>`,
    };
    // The failed address is no page to come back to: the page's forms return home.
    const view = { ...viewOf(request, model), path: consolePaths.home };
    if (request.method === "POST" && acceptsJson(request)) {
      return reply.code(problem.status).send({ ok: false, message: problem.message, return_to: view.path });
    }
    return answerPage(request, reply.code(problem.status), page, view);
  });

  scope.get("/", async (request, reply) => {
    const view = viewOf(request, model);
    const users = model.users().map((user) => ({ user, instances: model.instancesOf(user.user) }));
    return answerPage(request, reply, instancesPage(view, users), view);
  });
  scope.get("/console", async (_request, reply) => reply.redirect(consolePaths.home, 302));
  scope.get<{ Params: { user: string } }>("/console/users/:user", async (request, reply) => {
    const view = viewOf(request, model);
    return answerPage(request, reply, accountPage(view, model.accountOf(request.params.user)), view);
  });
  scope.get<{ Params: { user: string; uuid: string } }>(
    "/console/users/:user/instances/:uuid",
    async (request, reply) => {
      const view = viewOf(request, model);
      const instance = model.instance(request.params.user, request.params.uuid);
      return answerPage(request, reply, instancePage(view, instance), view);
    },
  );
  scope.get("/console/faults", async (request, reply) => {
    const view = viewOf(request, model);
    const page = faultsPage(view, model.faults(), model.requests(), [...apiPaths].sort());
    return answerPage(request, reply, page, view);
  });
  scope.get("/console/assets/console.js", async (_request, reply) =>
    reply.type("text/javascript; charset=utf-8").header("cache-control", "no-cache").send(CONSOLE_SCRIPT),
  );
  scope.get("/console/assets/console.css", async (_request, reply) =>
    reply.type("text/css; charset=utf-8").header("cache-control", "no-cache").send(CONSOLE_STYLES),
  );

  scope.post<{ Params: { action: string } }>("/console/actions/:action", async (request, reply) => {
    if (fromAnotherSite(request)) {
      const message =
        "Refused: console actions are taken from the console's own pages, not from another site.";
      return acceptsJson(request)
        ? reply.code(403).send({ ok: false, message, return_to: consolePaths.home })
        : reply.code(403).type("text/plain; charset=utf-8").send(message);
    }
    const name = request.params.action;
    if (!Object.hasOwn(CONSOLE_ACTIONS, name)) throw notFound("console action", name);
    const action = CONSOLE_ACTIONS[name];
    const form = formOf(request.body);
    const returnTo = pageToReturnTo(form.return_to);
    const outcome = carryOut(() => action.run(model, form), action.does);
    if (acceptsJson(request)) {
      return reply
        .code(outcome.status)
        .send({ ok: outcome.ok, message: outcome.message, return_to: returnTo });
    }
    const query = new URLSearchParams({ [outcome.ok ? "notice" : "problem"]: outcome.message });
    return reply.redirect(`${returnTo}?${query}`, 303);
  });
}

/** A refusal by the emulator's rules is the action's outcome, shown to the person; anything else is a fault. */
function carryOut(run: () => string, does: string): { ok: boolean; status: number; message: string } {
  try {
    return { ok: true, status: 200, message: run() };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { ok: false, status: error.status, message: `Could not ${does}: ${error.message}` };
  }
}

function viewOf(request: FastifyRequest, model: ConsoleModel): View {
  return {
    path: request.url.split("?")[0],
    now: model.now(),
    users: model.userNames(),
  };
}

/** The whole page, or only its live part when the page script asks for it (with its version, to skip no-ops). */
function answerPage(request: FastifyRequest, reply: FastifyReply, page: Page, view: View): FastifyReply {
  const live = liveOf(page, view).text;
  const version = createHash("sha256").update(live).digest("base64url").slice(0, 16);
  reply.headers(PAGE_HEADERS).header("x-console-version", version).type("text/html; charset=utf-8");
  if (request.headers["x-console-fragment"] === "live") return reply.send(live);
  return reply.send(documentOf(page, view, messagesOf(request.query), version).text);
}

function messagesOf(query: unknown): Messages {
  const { notice, problem } = (query ?? {}) as Record<string, unknown>;
  return {
    notice: typeof notice === "string" ? notice : undefined,
    problem: typeof problem === "string" ? problem : undefined,
  };
}

/** Form fields as text; anything else a body could hold (JSON numbers, arrays) is not a form field. */
function formOf(body: unknown): Form {
  if (body === null || typeof body !== "object") return {};
  return Object.fromEntries(Object.entries(body).filter(([, value]) => typeof value === "string"));
}

/**
 * Back to a console page only: never to another site (`//host`), the API, an action or an asset. Pages'
 * paths hold URL-encoded segments and no query.
 */
function pageToReturnTo(path: string | undefined): string {
  if (path === undefined || !/^[\w%.~!$&'()*+,;=:@/-]+$/.test(path) || /\/\/|\/\.\.?(\/|$)/.test(path)) {
    return consolePaths.home;
  }
  const isPage =
    path === consolePaths.home || path === consolePaths.faults || path.startsWith("/console/users/");
  return isPage ? path : consolePaths.home;
}

function acceptsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? "").includes("application/json");
}

/**
 * Browsers say where a request comes from (Sec-Fetch-Site, Origin); tools such as curl say nothing and
 * are let through, as the admin API lets them.
 */
function fromAnotherSite(request: FastifyRequest): boolean {
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined) return site !== "same-origin" && site !== "none";
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}
