/**
 * The web console's sign-in, for an emulator started with `--admin-key`: the form, the session cookie and the
 * refusal of a browser not signed in.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AccessGuard, Refusal } from "../core/http/access";
import { html } from "./html";
import { consolePaths, hidden, PAGE_HEADERS } from "./layout";

/**
 * Signing in to the console of an emulator started with `--admin-key`: one form asks for the key and the
 * browser keeps the session in an HttpOnly, SameSite=Strict cookie (core/http/access.ts says why). Every
 * console page answers a browser that is not signed in with this form, so a person lands back where they
 * were going.
 */
export function registerSignIn(
  scope: FastifyInstance,
  access: AccessGuard,
  pageToReturnTo: (path?: string) => string,
): void {
  scope.get("/console/sign-in", async (request, reply) => {
    if (!access.adminKeyRequired) return reply.redirect(consolePaths.home, 303);
    return sendSignInPage(reply.code(200), pageToReturnTo(queryField(request, "return_to")));
  });
  scope.post("/console/sign-in", async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, unknown>;
    const returnTo = pageToReturnTo(typeof form.return_to === "string" ? form.return_to : undefined);
    const key = typeof form.admin_key === "string" ? form.admin_key : "";
    if (!access.isAdminKey(key)) {
      return sendSignInPage(reply.code(401), returnTo, "That is not this emulator's admin key.");
    }
    return reply.header("set-cookie", access.sessionCookie()).redirect(returnTo, 303);
  });
}

/**
 * A refusal of a console request, as the one who asked can read it: the sign-in form for a person
 * opening a page without the admin key, JSON for the page script, plain text for the rest.
 */
export function sendConsoleRefusal(
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: Refusal,
  returnTo: string,
): FastifyReply {
  reply.code(refusal.status).headers(refusal.headers ?? {});
  if (
    refusal.status === 401 &&
    request.method === "GET" &&
    request.headers["x-console-fragment"] === undefined
  ) {
    return sendSignInPage(reply, returnTo);
  }
  const message = `${refusal.message[0].toUpperCase()}${refusal.message.slice(1)}`;
  if ((request.headers.accept ?? "").includes("application/json")) {
    return reply.send({ ok: false, message, return_to: consolePaths.home });
  }
  return reply.type("text/plain; charset=utf-8").send(message);
}

function sendSignInPage(reply: FastifyReply, returnTo: string, problem?: string): FastifyReply {
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sign in · gpucloud emulator</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${consolePaths.styles}" />
      </head>
      <body>
        <header class="top">
          <p class="brand">gpucloud emulator <span>console</span></p>
        </header>
        <div class="messages"><p id="problem" role="alert">${problem}</p></div>
        <main>
          <h1>Sign in</h1>
          <p>
            This emulator was started with an admin key (--admin-key): its console and admin API ask for it.
          </p>
          <form method="post" action="${consolePaths.signIn}" class="panel">
            ${hidden({ return_to: returnTo })}
            <label for="admin-key">Admin key</label>
            <input id="admin-key" name="admin_key" type="password" autocomplete="current-password" required />
            <button type="submit">Sign in</button>
          </form>
        </main>
      </body>
    </html>`;
  return reply.headers(PAGE_HEADERS).type("text/html; charset=utf-8").send(page.text);
}

function queryField(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : undefined;
}
