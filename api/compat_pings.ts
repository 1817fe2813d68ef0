import {
  beatByHash,
  type BeatOutcome,
  BODY_MAX,
  codeHash,
  countHeartbeat,
  pushHash,
  type Signal,
  slugHash,
} from "../kv/service/heartbeats.ts";
import { PING_KEY_RE } from "../kv/service/ping_keys.ts";
import { sha256hex } from "../lib/crypto.ts";
import { roughOrigin } from "../lib/ip.ts";
import { cutChars } from "../lib/text.ts";
import type { Deps } from "../lib/deps.ts";
import { BodyReadError } from "../http/body.ts";
import { logBug } from "../http/errors.ts";
import { clientOrigin } from "../http/guards.ts";
import { measured } from "../http/measured.ts";
import { Hono } from "hono";
import type { AppEnv, Ctx } from "../http/router.ts";
import { cutText, readChunks, resumeWith, STATUS_MAX, UUID_RE } from "./hooks.ts";

/**
 * Other products' ping addresses, answered as those products answer them, through the same
 * domain ping (kv/service/heartbeats.ts `beatByHash`: one lookup, the group commit, the same events, runs,
 * alerts and the 600 an hour per address) as this service's own /api/hooks:
 * - Healthchecks' pinging API: `/ping/<uuid>` and `/ping/<ping key>/<slug>`, each with
 *   `/start`, `/fail`, `/log` or `/<exit status>`, `?rid=`, `?create=1` on slugs; HEAD, GET and
 *   POST; plain-text answers (hc/api/views.py `ping`, `ping_by_slug`).
 * - Uptime Kuma's push monitors: `/api/push/<token>?status=up|down&msg=&ping=`, answered
 *   `{ok: true}` or 404 `{ok: false, msg}` (server/routers/api-router.js).
 * Other products' addresses, outside this service's OpenAPI document: plain Hono routes.
 */

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** Django's `<uuid:code>` (lower-case only), then "", start, fail, log or `<int:exitstatus>`. */
const BY_UUID = new RegExp(`^/ping/(${UUID})(?:/(start|fail|log|[0-9]+)?)?$`);
/** Django's `<slug:ping_key>/<slug:slug>`, then start, fail, log or `<int:exitstatus>`. */
const BY_SLUG = /^\/ping\/([-a-zA-Z0-9_]+)\/([-a-zA-Z0-9_]+)(?:\/(start|fail|log|[0-9]+))?$/;
const PUSH = /^\/api\/push\/([^/]+)$/;
/** The slug `?create=1` may make a check with. */
const HC_NEW_SLUG_RE = /^[a-z0-9_-]{1,100}$/;

const TEXT = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" };
/** Django's `never_cache`, as Healthchecks' ping answers carry it. */
const NEVER_CACHE = "max-age=0, no-cache, no-store, must-revalidate, private";
const OK_HEADERS = {
  ...TEXT,
  "cache-control": NEVER_CACHE,
  "access-control-allow-origin": "*",
  "ping-body-limit": String(BODY_MAX),
};
const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};
const METHODS = "HEAD, GET, POST";

/** An answer of a few bytes, with the headers those products send; Deno sends its length. */
const text = (body: string, status: number, headers: Record<string, string> = TEXT) =>
  new Response(body, { status, headers });
const kuma = (body: object, status: number, extra: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } });

/** The kind and exit code of a Healthchecks signal segment; null: an exit status over 255. */
function signalOf(segment: string | undefined): Pick<Signal, "kind" | "code"> | null {
  if (!segment) return { kind: "success", code: null };
  if (segment === "start" || segment === "fail" || segment === "log") {
    return { kind: segment, code: null };
  }
  const code = Number(segment);
  if (code > 255) return null;
  return { kind: code === 0 ? "success" : "fail", code };
}

/** A request's body, at most BODY_MAX bytes of it (the rest is not read), as text. */
async function bodyText(req: Request): Promise<string> {
  if (req.method !== "POST" || req.body === null) return "";
  const given = Number(req.headers.get("content-length") ?? NaN);
  let bytes: Uint8Array;
  try {
    bytes = given >= 0 && given <= BODY_MAX
      ? await req.bytes()
      : await readChunks(req.body, BODY_MAX);
  } catch (err) {
    throw new BodyReadError(err);
  }
  return cutText(bytes, BODY_MAX);
}

/** The query's value of `name`: the last one, as Django's `request.GET.get` takes it. */
function param(url: string, q: number, name: string): string | undefined {
  if (q < 0) return undefined;
  const all = new URLSearchParams(url.slice(q + 1)).getAll(name);
  return all.at(-1);
}

/** Every method, so that the app's counts and logs name the route (an ALL route names none). */
const EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** The area: every request to /ping/ and /api/push/, answered as those products answer it. */
export function compatPingRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  // First in the app's router (areas.ts `first`): counted, timed and logged here.
  app.on(EVERY_METHOD, ["/ping/*", "/api/push/*"], measured, compatAnswer(deps));
  return app;
}

/** Answers a request to /ping/ or /api/push/ as those products do. */
export function compatAnswer(deps: Deps) {
  return (c: Ctx): Promise<Response> => {
    const req = c.req.raw;
    const url = req.url;
    const q = url.indexOf("?");
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const path = q < 0 ? url.slice(pathStart) : url.slice(pathStart, q);
    let route: string;
    let answer: Promise<Response>;
    if (path.startsWith("/ping/")) {
      const byUuid = BY_UUID.exec(path);
      const bySlug = byUuid ? null : BY_SLUG.exec(path);
      route = byUuid
        ? byUuid[2] ? "/ping/:uuid/:signal" : "/ping/:uuid"
        : bySlug
        ? bySlug[3] ? "/ping/:key/:slug/:signal" : "/ping/:key/:slug"
        : "/ping/*";
      answer = byUuid || bySlug
        ? hcPing(deps, c, byUuid, bySlug, url, q)
        : Promise.resolve(text("not found", 404));
    } else {
      route = "/api/push/:token";
      const m = PUSH.exec(path);
      const token = m ? decoded(m[1]) : null;
      answer = token !== null
        ? kumaPush(deps, c, token, url, q)
        : Promise.resolve(kuma({ ok: false, msg: "Monitor not found or not active." }, 404));
    }
    // The route pattern names the form of the address in a bug's log line.
    return answer.catch((err) => failed(err, req.method, route));
  };
}

/** A path segment decoded as Express decodes route parameters; null when malformed. */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** An error past the answers above: a body cut short is the client's (400), else a bug. */
function failed(err: unknown, method: string, route: string): Response {
  if (err instanceof BodyReadError) return text("the request body could not be read", 400);
  logBug(method, route, err as Error);
  return text("internal error", 500);
}

/** Healthchecks' `ping` and `ping_by_slug`. */
async function hcPing(
  deps: Deps,
  c: Ctx,
  byUuid: RegExpExecArray | null,
  bySlug: RegExpExecArray | null,
  url: string,
  q: number,
): Promise<Response> {
  const method = c.req.raw.method;
  if (method !== "GET" && method !== "POST" && method !== "HEAD") {
    return text(`method ${method} not allowed here`, 405, { ...TEXT, allow: METHODS });
  }
  const verdict = countHeartbeat(deps, clientOrigin(deps, c));
  if (!verdict.ok) {
    return text("too many pings from this address: at most 600 an hour", 429, {
      ...TEXT,
      "retry-after": String(verdict.retryAfter),
    });
  }
  if (bySlug && bySlug[2] !== bySlug[2].toLowerCase()) return text("invalid url format", 400);
  const sig = signalOf(byUuid ? byUuid[2] : bySlug![3]);
  if (!sig) return text("invalid url format", 400);
  const rid = param(url, q, "rid");
  if (rid !== undefined && !UUID_RE.test(rid)) return text("invalid uuid format", 400);
  const signal: Signal = {
    ...sig,
    rid: rid?.toLowerCase() ?? null,
    body: await bodyText(c.req.raw),
    origin: roughOrigin(clientOrigin(deps, c)),
  };
  const record = (hash: string) =>
    beatByHash(deps, hash, "", signal, method, "ignore", resumeWith(deps));
  if (byUuid) return hcAnswer(await record(codeHash(byUuid[1])), false);
  const [, key, slug] = bySlug!;
  if (!PING_KEY_RE.test(key)) return text("not found", 404);
  const keyHash = sha256hex(key);
  const hash = slugHash(keyHash, slug);
  const done = await record(hash);
  if (done !== "unknown" || param(url, q, "create") !== "1") return hcAnswer(done, false);
  // A check's slug is Healthchecks' `[a-z0-9-_]`, at most 100 characters (its Spec's rule).
  if (!HC_NEW_SLUG_RE.test(slug)) return text("invalid url format", 400);
  // Auto-provisioning: loaded only here, it brings the rules of adding a service.
  const { provisionCheck } = await import("../kv/service/rules.ts");
  const made = await provisionCheck(deps, keyHash, slug);
  if (made === "refused") return text("not found", 404);
  return hcAnswer(await record(hash), made === "created");
}

function hcAnswer(done: BeatOutcome, created: boolean): Response {
  if (done === "ambiguous") return text("ambiguous slug", 409);
  if (typeof done !== "object") return text("not found", 404);
  return created ? text("Created", 201, OK_HEADERS) : text("OK", 200, OK_HEADERS);
}

/** The largest `ping` Uptime Kuma takes, in ms. */
const MAX_PING_MS = 100_000_000_000;

/** Uptime Kuma's push route: any status but "up" is down; `msg` defaults to "OK". */
async function kumaPush(
  deps: Deps,
  c: Ctx,
  token: string,
  url: string,
  q: number,
): Promise<Response> {
  const method = c.req.raw.method;
  if (method !== "GET" && method !== "POST" && method !== "HEAD") {
    return kuma({ ok: false, msg: `method ${method} not allowed here` }, 405, { allow: METHODS });
  }
  const verdict = countHeartbeat(deps, clientOrigin(deps, c));
  if (!verdict.ok) {
    return kuma({ ok: false, msg: "too many pings from this address: at most 600 an hour" }, 429, {
      "retry-after": String(verdict.retryAfter),
    });
  }
  const msg = param(url, q, "msg") || "OK";
  // JavaScript's parseFloat, as Kuma reads it: "12ms" is 12, "abc" and 0 are none.
  const ping = parseFloat(param(url, q, "ping") ?? "") || null;
  if (ping !== null && (ping < 0 || ping > MAX_PING_MS)) {
    return kuma({
      ok: false,
      msg: `Invalid ping value. Must be between 0 and ${MAX_PING_MS} ms.`,
    }, 404);
  }
  const up = (param(url, q, "status") || "up") === "up";
  const signal: Signal = {
    kind: up ? "success" : "fail",
    code: null,
    rid: null,
    body: "",
    origin: roughOrigin(clientOrigin(deps, c)),
    ms: ping,
  };
  const status = cutChars(msg.trim(), STATUS_MAX);
  const resume = resumeWith(deps);
  const done = await beatByHash(deps, pushHash(token), status, signal, method, "ignore", resume);
  if (typeof done !== "object") {
    return kuma({ ok: false, msg: "Monitor not found or not active." }, 404);
  }
  return kuma({ ok: true }, 200);
}
