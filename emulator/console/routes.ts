/**
 * The web console's routes: its pages, assets and actions on `/` and `/console/...`, behind the access guard.
 */
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Area, Refusal } from "../core/http/access";
import { toApiError } from "../core/http/envelope";
import { ApiError, notFound } from "../core/http/errors";
import { API_BASE, BODY_LIMIT, type EmulatorControls } from "../core/controls/emulator-controls";
import { CONSOLE_ACTIONS, type Form } from "./actions";
import { html } from "./html";
import {
  consolePaths,
  documentOf,
  liveOf,
  PAGE_HEADERS,
  type Messages,
  type Page,
  type View,
} from "./layout";
import { ConsoleModel } from "./model";
import { accountPage, faultsPage, instancePage, instancesPage } from "./pages";
import { CONSOLE_SCRIPT } from "./script";
import { stockPage } from "./stock-page";
import { registerSignIn, sendConsoleRefusal } from "./sign-in";
import { CONSOLE_STYLES } from "./styles";

/**
 * The web console (docs/design/contracts.md#the-console-and-who-may-reach-it): HTML pages at `/` and
 * `/console/...` over a ConsoleModel. Handlers only parse and answer. Its onRoute hook must be added before
 * the API's routes, to list their paths for the fault form.
 */
export function registerConsole(app: FastifyInstance, emulator: EmulatorControls): void {
  const apiPaths = new Set<string>();
  app.addHook("onRoute", (route) => {
    // Faults match exact paths, so a parametric route (/assets/:asset_id) cannot be offered.
    if (route.url.startsWith(`${API_BASE}/`) && !route.url.includes(":")) {
      apiPaths.add(route.url.slice(API_BASE.length));
    }
  });
  app.register(async (scope) => {
    consoleRoutes(scope, new ConsoleModel(emulator), apiPaths);
    registerSignIn(scope, emulator.access, pageToReturnTo);
  });
}

/**
 * What a console route is to the access guard (core/http/access.ts), by its route pattern; undefined for a
 * route that is not the console's. Its script and styles hold nothing secret: the sign-in page uses them.
 */
export function consoleAreaOf(route: string): Area | undefined {
  if (route === consolePaths.script || route === consolePaths.styles) return "open";
  if (route === consolePaths.signIn) return "sign-in";
  return route === consolePaths.home || route === "/console" || route.startsWith("/console/")
    ? "control"
    : undefined;
}

/** A console request the access guard refused, answered in the console's own ways. */
export function answerConsoleRefusal(
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: Refusal,
): FastifyReply {
  return sendConsoleRefusal(request, reply, refusal, pageToReturnTo(request.url.split("?")[0]));
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
  scope.get("/console/gpus", async (request, reply) => {
    const view = viewOf(request, model);
    return answerPage(request, reply, stockPage(view, model.stock()), view);
  });
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
    path === consolePaths.home ||
    path === consolePaths.faults ||
    path === consolePaths.gpus ||
    path.startsWith("/console/users/");
  return isPage ? path : consolePaths.home;
}

function acceptsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? "").includes("application/json");
}
