/**
 * What every page shares: the middleware app.ts runs on every path outside /api (security
 * headers, the cross-site check of state-changing requests, the layout renderer, the web
 * session), the HTML error pages, and the guards pages call.
 *
 * A page file (web/<name>.tsx) exports `(deps) => Hono<AppEnv>` built with `webRouter()`, is
 * listed in app.ts's AREAS with the prefixes it answers under, and is mounted (Hono's
 * `app.route`) on the first request under one of them.
 */
import { Hono } from "hono";
import type { Context, MiddlewareHandler, Next } from "hono";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { jsxRenderer } from "hono/jsx-renderer";
import { secureHeaders } from "hono/secure-headers";
import { ConflictError, isLocked } from "../kv/_atomic.ts";
import { type Account, isTeam } from "../kv/accounts/accounts.ts";
import { DomainError, tooLarge } from "../lib/errors.ts";
import { MAX_AVATAR_BYTES } from "../kv/files/avatars.ts";
import { errorKind, log, stackFrames } from "../lib/log.ts";
import { withBody } from "../http/body.ts";
import { ApiError, STATUS_OF } from "../http/errors.ts";
import type { Deps } from "../lib/deps.ts";
import type { AppEnv } from "../http/router.ts";
import { Layout } from "./_layout.tsx";
import { readWebSession } from "./_session.ts";

export type WebCtx = Context<AppEnv>;

/** A router for a page area. */
export function webRouter(): Hono<AppEnv> {
  return new Hono<AppEnv>();
}

const CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
  manifestSrc: ["'self'"],
};

/** Pages that run a viewer from npm with its own needs (images as data: URLs). */
const VIEWER_PATHS = new Set(["/api-reference"]);

/**
 * The security headers of every page. Left out, as each header costs every page answer some CPU:
 * X-XSS-Protection (the auditor it controlled is gone from browsers; "0" was only ever asked of
 * old ones), X-Download-Options (Internet Explorer 8) and X-Permitted-Cross-Domain-Policies
 * (Flash). Strict-Transport-Security only over https, the only place browsers read it (RFC 6797
 * 7.2). X-Content-Type-Options comes from app.ts for every answer.
 */
const headersFor = (csp: typeof CSP, https: boolean) =>
  secureHeaders({
    contentSecurityPolicy: csp,
    referrerPolicy: "no-referrer",
    xFrameOptions: "DENY",
    crossOriginOpenerPolicy: "same-origin",
    crossOriginResourcePolicy: "same-origin",
    crossOriginEmbedderPolicy: false,
    originAgentCluster: "?1",
    permissionsPolicy: { camera: [], microphone: [], geolocation: [] },
    strictTransportSecurity: https ? "max-age=15552000; includeSubDomains" : false,
    xContentTypeOptions: false,
    xXssProtection: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
  });

/** The middleware of every page and static file (app.ts runs it outside /api). */
export function webMiddleware(deps: Deps): MiddlewareHandler<AppEnv> {
  const base = new URL(deps.config.baseUrl).origin;
  const https = deps.config.baseUrl.startsWith("https:");
  const strict = headersFor(CSP, https);
  const viewer = headersFor({ ...CSP, imgSrc: ["'self'", "data:"] }, https);
  // Same origin as the request, or as BASE_URL (behind a proxy the request's own URL may
  // say http while the browser's Origin says https).
  const sameOrigin = csrf({
    origin: (origin, c) => origin === base || origin === new URL(c.req.url).origin,
  });
  const render = jsxRenderer(
    ({ children, Layout: _outer, ...props }, c) => (
      <Layout
        {...props}
        baseUrl={deps.config.baseUrl}
        viewer={c.get("account") ?? null}
        path={c.req.path}
      >
        {children}
      </Layout>
    ),
    { docType: true },
  );
  return async (c, next) => {
    const headers = VIEWER_PATHS.has(c.req.path) ? viewer : strict;
    await headers(c, async () => {
      if (c.req.path.startsWith("/static/")) return await next();
      c.header("Vary", "Cookie");
      let passed = false;
      try {
        await sameOrigin(c, async () => {
          passed = true;
          await readWebSession(deps, c);
          // Personal answers are never stored by shared caches.
          if (c.get("account")) c.header("Cache-Control", "private, no-store");
          await render(c, async () => {
            limitBody(c);
            await next();
          });
        });
      } catch (err) {
        // hono/csrf refused it: a form posted from another site, or with no Origin at all.
        if (passed || !(err instanceof HTTPException) || err.status !== 403) throw err;
        await render(c, async () => {});
        c.res = await errorPage(c, 403, FOREIGN_FORM);
      }
    });
  };
}

/**
 * A text form's body: 64 KiB holds every form's fields at their longest in any script (a
 * character outside ASCII is up to 9 bytes once urlencoded: 3 UTF-8 bytes, each as %XX). A
 * route whose form may hold more declares its own limit with `formLimit`.
 */
export const FORM_LIMIT = 64 * 1024;
/** The picture's own cap plus room for the multipart envelope. */
export const AVATAR_FORM_LIMIT = MAX_AVATAR_BYTES + FORM_LIMIT;

/** The limits routes declare, by the middleware that declares each. */
const declaredLimits = new WeakMap<MiddlewareHandler, number | "own">();

/**
 * A page route's body limit, declared on the route (`app.post(path, formLimit(n), handler)`):
 * the page middleware caps the body at it before the route runs; "own": the route caps its
 * own stream (the avatar form, to answer beside its field; the file upload).
 */
export function formLimit(limit: number | "own"): MiddlewareHandler<AppEnv> {
  const declared: MiddlewareHandler<AppEnv> = async (_c, next) => await next();
  declaredLimits.set(declared, limit);
  return declared;
}

/** The body limit of the route a request goes to: its declared one, else FORM_LIMIT. */
function bodyLimitOf(c: WebCtx): number | "own" {
  for (const route of c.req.matchedRoutes) {
    const limit = declaredLimits.get(route.handler);
    if (limit !== undefined) return limit;
  }
  return FORM_LIMIT;
}

const OVER_LIMIT = (limit: number) =>
  limit === AVATAR_FORM_LIMIT
    ? "The picture is over 10 MB. Choose a smaller one."
    : `This form sent more than ${limit / 1024} KiB, more than its fields can hold. ` +
      "Shorten the text and send it again.";

/**
 * Refuses a body over its path's limit: at once when Content-Length says so (nothing of it is
 * read), otherwise when the stream passes the limit while it is read (the rest is not read).
 * Either way the answer is the 413 page.
 */
function limitBody(c: WebCtx): void {
  if (c.req.method === "GET" || c.req.method === "HEAD") return;
  const limit = bodyLimitOf(c);
  if (limit !== "own") capBody(c, limit);
}

/** Caps the request's body at `limit` bytes (see limitBody); throws the 413 error at once when
 * Content-Length is over it, or from the stream's read that passes it. */
export function capBody(c: WebCtx, limit: number): void {
  const body = c.req.raw.body;
  if (!body) return;
  const declared = Number(c.req.header("content-length") ?? NaN);
  if (declared > limit) {
    body.cancel().catch(() => {});
    tooLarge(OVER_LIMIT(limit));
  }
  const reader = body.getReader();
  let seen = 0;
  const capped = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const { done, value } = await reader.read();
        if (done) return ctl.close();
        seen += value.byteLength;
        if (seen > limit) {
          reader.cancel().catch(() => {});
          return ctl.error(new DomainError("too_large", OVER_LIMIT(limit)));
        }
        ctl.enqueue(value);
      } catch (err) {
        ctl.error(err);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  c.req.raw = withBody(c.req.raw, capped);
}

// ---- errors -------------------------------------------------------------------------------

const TITLES: Record<number, string> = {
  400: "That did not work",
  401: "Sign-in needed",
  403: "Not allowed",
  404: "Page not found",
  405: "Not allowed here",
  409: "That cannot be done now",
  410: "Gone",
  413: "Too large",
  429: "Too many requests",
  503: "Not available right now",
};

/** A wait as a person says it: "5 seconds", "50 minutes", "an hour", "3 hours". */
export function waitInWords(seconds: number): string {
  if (seconds < 60) return seconds <= 1 ? "a second" : `${Math.ceil(seconds)} seconds`;
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  if (minutes === 1) return "a minute";
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.ceil(minutes / 60);
  return hours === 1 ? "an hour" : `${hours} hours`;
}

/** The HTML page of an error answer on a page path (app.ts calls it for errors and 404s). */
export function errorPage(
  c: WebCtx,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response | Promise<Response> {
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  c.header("Cache-Control", "no-store");
  c.status(status as 400);
  const title = TITLES[status] ?? "Something went wrong";
  const retry = headers["Retry-After"];
  const body = (
    <>
      <h1>{title}</h1>
      <p>{message}</p>
      {retry ? <p>You can try again in {waitInWords(Number(retry))}.</p> : null}
      {status === 401
        ? (
          <p>
            <a href="/sign-in">Sign in</a>
          </p>
        )
        : null}
      <p>
        <a href="/">Home</a> · <a href="/catalogue">Catalogue</a> · <a href="/search">Search</a>
      </p>
    </>
  );
  // The renderer is there for page paths; errors before it (a bad Origin) get the layout too.
  if (c.getLayout()) return c.render(body, { title, noindex: true });
  return c.html(
    "<!DOCTYPE html>" +
      (
        <Layout title={title} noindex baseUrl="" viewer={viewer(c)} path={c.req.path}>
          {body}
        </Layout>
      ),
    status as 400,
  );
}

const FOREIGN_FORM = "This form was sent from another site (or without saying where from), " +
  "so it was not accepted. Open the page on this site and send it again.";

/** Errors of pages are pages: the same statuses as the API's, in HTML. */
export function answerPageError(err: Error, c: WebCtx): Response | Promise<Response> {
  if (err instanceof DomainError) {
    const headers: Record<string, string> = err.retryAfter !== undefined
      ? { "Retry-After": String(err.retryAfter) }
      : {};
    return errorPage(c, STATUS_OF[err.kind], sentence(err.message), headers);
  }
  if (err instanceof ApiError) return errorPage(c, err.status, sentence(err.message), err.headers);
  if (err instanceof HTTPException) {
    // A guard's redirect (to the sign-in page) carries its own answer.
    if (err.res) return err.getResponse();
    const message = err.message || (err.status === 404 ? NOT_FOUND : "That did not work.");
    return errorPage(c, err.status, sentence(message));
  }
  if (err instanceof ConflictError || err instanceof Deno.errors.BadResource || isLocked(err)) {
    return errorPage(c, 503, "The service is busy or its database does not answer; try again.", {
      "Retry-After": "5",
    });
  }
  // A bug: the route pattern only (paths may hold secrets), never bodies or addresses.
  log("error", "internal error", {
    method: c.req.method,
    route: c.req.routePath,
    error: errorKind(err),
    at: stackFrames(err),
  });
  return errorPage(c, 500, "Something went wrong on our side. Please try again.");
}

/** The API's messages ("too many requests: ...") as a sentence for a page. */
const sentence = (s: string) => {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
};

/**
 * The notice after a form sent twice (Back and submit, a double click), whose second sending made
 * nothing and answered with `?sent=again`; `made` says what the first one did.
 */
export function SentAgain(props: { c: WebCtx; made: string }) {
  if (props.c.req.query("sent") !== "again") return null;
  return <p class="notice" role="status">That form was sent before: {props.made}, not twice.</p>;
}

/** The message of a not-found page. */
export const NOT_FOUND = "There is nothing at this address. It may have moved or been removed.";

// ---- guards ------------------------------------------------------------------------------

/** The signed-in account, or null. */
export const viewer = (c: WebCtx): Account | null => c.get("account") ?? null;

/** Where the sign-in page sends the browser back to: a path of ours only. */
export function safeNext(next: string | undefined | null): string {
  return next && /^\/(?![/\\])[^\s]*$/.test(next) ? next : "/me";
}

/** The signed-in account; otherwise the browser is sent to sign in and brought back. */
export function requireAccount(c: WebCtx): Account {
  const a = viewer(c);
  if (a) return a;
  const back = c.req.method === "GET" ? c.req.path + (new URL(c.req.url).search || "") : "/me";
  // The answer is built on the context, so what it holds (a cookie being dropped) goes too.
  throw new HTTPException(303, { res: seeOther(c, `/sign-in?next=${encodeURIComponent(back)}`) });
}

/** A reviewer or the owner; a signed-in account without the role gets the forbidden page. */
export function requireTeamPage(c: WebCtx): Account {
  const a = requireAccount(c);
  if (!isTeam(a)) throw new HTTPException(403, { message: "This page is for the review team." });
  return a;
}

/**
 * The record id in the route's `:id`, as a number. Every such route takes digits only, so what
 * is left to refuse is an id no record has (zero): the not-found page, as for any address with
 * nothing at it.
 */
export function routeId(c: WebCtx): number {
  const id = Number(c.req.param("id"));
  if (!Number.isSafeInteger(id) || id <= 0) throw new HTTPException(404, { message: NOT_FOUND });
  return id;
}

/** A 303 to a path (the answer of every successful form). */
export function seeOther(c: WebCtx, path: string): Response {
  c.header("Cache-Control", "no-store");
  return c.redirect(path, 303);
}

export type { Next };
