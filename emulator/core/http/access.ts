/**
 * In core's HTTP room, the access guard: which hosts, origins and admin keys may reach the emulator, its
 * admin API and its console.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { IncomingHttpHeaders } from "node:http";

/**
 * Who may reach the emulator, in one place. The emulator runs beside a browser that visits every other
 * site, and a browser is the one client a stranger's page can aim at a local server:
 *
 * - Host allow-list (every route): a page served from a name that its owner points at 127.0.0.1 (DNS
 *   rebinding) is same-origin with the emulator and could read its answers. Such a request names that
 *   page's host, so the emulator answers only to hosts a browser cannot be tricked into: `localhost` and
 *   `*.localhost`, IP addresses (a page cannot rebind a literal address), the `--host` it was given and
 *   the names given with `--allowed-host` (`.example.com` allows the domain and its subdomains). This is
 *   the allow-list Vite and webpack-dev-server apply for the same reason.
 * - Origin check (state-changing requests to the admin API and the console): a page of another site,
 *   another port of localhost included, may send a form or a no-cors fetch without reading the answer.
 *   Browsers say where such a request comes from (`Sec-Fetch-Site`, `Origin`, `Origin: null` for
 *   sandboxed frames and some redirects); only the emulator's own pages pass. A request that says
 *   neither comes from no page (curl, the SDK, scripts) and passes.
 * - Admin key (`--admin-key`, optional): for an emulator others can reach, the admin API and the console
 *   ask for it: scripts send `Authorization: Bearer <admin key>`, a person signs in once and the browser
 *   keeps an HttpOnly, SameSite=Strict session cookie. The API keys are no admin credential: whoever
 *   holds one may use the API as its user, not reset the cloud or read every other user's keys.
 */

export interface AccessOptions {
  /** The address the emulator listens on (`--host`); a name given there is allowed as a Host. */
  host: string;
  /** More names the emulator answers to (`--allowed-host`); `.example.com` covers its subdomains too. */
  allowedHosts?: readonly string[];
  /** When set, the admin API and the console ask for it. */
  adminKey?: string;
}

/** Why a request is not served: the status, a short error name and a message that says how to get through. */
export interface Refusal {
  status: number;
  error: string;
  message: string;
  headers?: Record<string, string>;
}

/**
 * What a request reaches: `control` is the admin API and the console (every check), `sign-in` the
 * console's sign-in form (no admin key yet), `open` the rest: the API (it has keys of its own), the
 * instances' web services and the console's script and styles.
 */
export type Area = "control" | "sign-in" | "open";

/** Methods that change nothing: a page of another site may link to them (a console page, for one). */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const SHOWN_HOST_CHARACTERS = 100;
/** The longest DNS name: anything longer is no name to advise allowing. */
const MAX_HOST_NAME_CHARACTERS = 253;

/** The admin key's shortest length: reachable from a network, a short key is guessed by trying. */
export const ADMIN_KEY_MIN_LENGTH = 16;

export class AccessGuard {
  private readonly allowedNames: readonly string[];
  private readonly adminKeyDigest?: Buffer;
  private readonly session = randomBytes(32).toString("base64url");
  /** Named after this emulator's session: cookies are shared by every port of a host. */
  readonly cookieName = `gpucloud_emulator_admin_${digest(this.session).toString("hex").slice(0, 12)}`;

  constructor(options: AccessOptions) {
    const names = [options.host, ...(options.allowedHosts ?? [])].map((name) =>
      withoutRootDot(name.toLowerCase()),
    );
    this.allowedNames = names.filter((name) => isIP(name) === 0);
    if (options.adminKey !== undefined) this.adminKeyDigest = digest(options.adminKey);
  }

  /** Whether the admin API and the console ask for the admin key. */
  get adminKeyRequired(): boolean {
    return this.adminKeyDigest !== undefined;
  }

  /** The refusal of a request, or undefined when it may go on to its route. */
  judge(method: string, headers: IncomingHttpHeaders, area: Area): Refusal | undefined {
    return (
      this.hostRefusal(headers.host) ??
      (area === "open" ? undefined : this.crossSiteRefusal(method, headers)) ??
      (area === "control" ? this.adminRefusal(headers) : undefined)
    );
  }

  /** Whether `key` is the admin key (compared in constant time); false when none is set. */
  isAdminKey(key: string): boolean {
    return this.adminKeyDigest !== undefined && timingSafeEqual(digest(key), this.adminKeyDigest);
  }

  /** The Set-Cookie value that signs a browser in: HttpOnly and SameSite=Strict, gone with the browser session. */
  sessionCookie(): string {
    return `${this.cookieName}=${this.session}; Path=/; HttpOnly; SameSite=Strict`;
  }

  private hostRefusal(host: string | undefined): Refusal | undefined {
    // HTTP/1.0 without Host: no browser sends that.
    if (host === undefined || this.hostAllowed(host)) return undefined;
    const shown = JSON.stringify(host.slice(0, SHOWN_HOST_CHARACTERS));
    const name = hostnameOf(host);
    const allow =
      name === undefined || name.length > MAX_HOST_NAME_CHARACTERS
        ? "Reach it as localhost or by its IP address"
        : `To reach it by this name, start it with --allowed-host ${name} (startEmulator({ allowedHosts: ["${name}"] }))`;
    return {
      status: 421,
      error: "host_not_allowed",
      message:
        `the emulator does not answer to Host ${shown}: it answers to localhost, IP addresses and the names ` +
        `given with --host or --allowed-host, so that a web page cannot reach it through a name of its own ` +
        `(DNS rebinding). ${allow}.`,
    };
  }

  private hostAllowed(host: string): boolean {
    const name = hostnameOf(host);
    if (name === undefined) return false;
    if (isIP(name.replace(/^\[|\]$/g, "")) !== 0) return true;
    if (name === "localhost" || name.endsWith(".localhost")) return true;
    return this.allowedNames.some((allowed) =>
      allowed.startsWith(".") ? name === allowed.slice(1) || name.endsWith(allowed) : name === allowed,
    );
  }

  private crossSiteRefusal(method: string, headers: IncomingHttpHeaders): Refusal | undefined {
    if (SAFE_METHODS.has(method)) return undefined;
    const site = headers["sec-fetch-site"];
    const origin = headers.origin;
    const fromOwnPage =
      (site === undefined || site === "same-origin" || site === "none") &&
      (origin === undefined || sameHost(origin, headers.host));
    if (fromOwnPage) return undefined;
    const said = [
      origin === undefined ? "" : `Origin ${origin}`,
      site === undefined ? "" : `Sec-Fetch-Site ${site}`,
    ];
    return {
      status: 403,
      error: "cross_site_request",
      message:
        `refused: the admin API and the console take changes from the console's own pages and from tools ` +
        `(curl, scripts, the SDK), not from another site's page (${said.filter(Boolean).join(", ")}).`,
    };
  }

  private adminRefusal(headers: IncomingHttpHeaders): Refusal | undefined {
    if (this.adminKeyDigest === undefined) return undefined;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")?.[1];
    if (bearer !== undefined && this.isAdminKey(bearer)) return undefined;
    const cookie = cookieValue(headers.cookie, this.cookieName);
    if (cookie !== undefined && sameSecret(cookie, this.session)) return undefined;
    return {
      status: 401,
      error: "admin_key_required",
      message:
        "the admin API and the console of this emulator need its admin key (--admin-key): send the header " +
        "'Authorization: Bearer <admin key>', or sign in at /console/sign-in in a browser. API keys are not accepted here.",
      headers: { "www-authenticate": 'Bearer realm="gpucloud emulator admin"' },
    };
  }
}

/** Whether the emulator listens on loopback only (nobody else on the network reaches it). */
export function isLoopbackAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1") return true;
  return isIP(bare) === 4 && bare.startsWith("127.");
}

/**
 * The host name of a Host header, lower case (an IPv6 address in brackets), or undefined when it is
 * malformed. A fully qualified name's trailing dot names the same host, so it is dropped.
 */
function hostnameOf(host: string): string | undefined {
  if (/[\s/?#@\\]/.test(host)) return undefined;
  try {
    return withoutRootDot(new URL(`http://${host}`).hostname);
  } catch {
    return undefined;
  }
}

/** `localhost.` is `localhost`: the root's dot ends every fully qualified name (a lone or doubled dot stays). */
function withoutRootDot(name: string): string {
  return name.replace(/(?<=[^.])\.$/, "");
}

function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === new URL(`http://${host}`).host;
  } catch {
    return false; // `null`, and anything else that is no origin
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
