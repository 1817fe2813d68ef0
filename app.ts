import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import type { Deps } from "./lib/deps.ts";
import { answerError, ApiError } from "./http/errors.ts";
import type { AppEnv } from "./http/router.ts";
import type { DocConfig } from "./http/openapi_doc.ts";
import { isPage, lazyAreas, mountAreasOver, ROUTE_AREAS } from "./areas.ts";
import { compression } from "./http/compression.ts";
import { measured } from "./http/measured.ts";
import { healthz } from "./api/healthz.ts";
import { errorKind, log } from "./lib/log.ts";

/**
 * Builds the whole service over the given dependencies; nothing here touches globals. The route
 * areas (areas.ts) are mounted on the first request under one of their prefixes; every
 * request, pings included, then goes through this one router and its middleware.
 */
export function createApp(deps: Deps): Hono<AppEnv> {
  // The trie router, named: Hono's default first tries its RegExpRouter, which cannot hold a
  // literal segment beside a parameter (/api/profiles/slug/:name next to /api/profiles/:id),
  // fails on the first request after compiling most of the routes, and falls back to this one.
  // It also takes routes after the first request, which the lazy mounts need.
  const app = new Hono<AppEnv>({ router: new TrieRouter() });
  app.use("*", lazyAreas(app, deps));
  app.use("*", entrance(deps));
  // Loaded on the first scrape: a process nobody scrapes never evaluates it.
  let metrics: Promise<(c: Context<AppEnv>) => Promise<Response>> | null = null;
  app.get("/metrics", async (c) => {
    metrics ??= import("./http/metrics.ts").then((m) => m.metricsRoute(deps));
    return await (await metrics)(c);
  });

  let doc: object | null = null;
  app.get("/api/openapi.json", async (c) => c.json(doc ??= await openApiDocument(deps)));
  // Asked first and most often by machines: answered without loading an area.
  app.get("/api/healthz", healthz(deps));

  // No route answers this method here: 405 with Allow when routes answer the path with others.
  // The path's areas under every method are mounted first, so the Allow lists all of them.
  app.notFound((c) =>
    mountAreasOver(app, c.req.path).then(() => methodNotAllowed(app, c) ?? notFound(c))
  );
  app.onError(answerFailure);
  return app;
}

/** The answer to an error no route answered itself: an error page, or JSON `{error}`. */
function answerFailure(err: Error, c: Context<AppEnv>): Response | Promise<Response> {
  return isPage(c.req.path)
    ? pageLayer().then((m) => m.answerPageError(err, c), () => unavailablePage(c))
    : answerError(err, c);
}

/**
 * The app's middleware, in one layer (each layer of Hono's chain is a call and a promise more on
 * every request): every request is counted, timed and logged (http/measured.ts), compressed when
 * the client accepts it (http/compression.ts: Hono's compress, with `shortAnswers` inside it), and
 * a page goes through the page layer. An error the page layer throws becomes its answer here, as
 * Hono's chain would make it, so that it is compressed and counted by its status.
 */
function entrance(deps: Deps): MiddlewareHandler<AppEnv> {
  const pages = pageMiddleware(deps);
  const compressed = compression();
  return (c, next) =>
    measured(c, () =>
      compressed(c, async () => {
        try {
          await pages(c, next);
        } catch (err) {
          if (!(err instanceof Error)) throw err;
          c.error = err;
          c.res = await answerFailure(err, c);
        }
      }));
}

/**
 * Pages and static files: security headers, the cross-site check, the layout, the web
 * session. The JSON API never sees the cookie. The page layer (JSX, its middleware) is
 * imported on the first page request: a process that serves only the API never loads it.
 */
function pageMiddleware(deps: Deps): MiddlewareHandler<AppEnv> {
  let web: MiddlewareHandler<AppEnv> | null = null;
  // Not async: the API's requests pass straight on (a promise less each).
  return (c, next) => {
    if (!isPage(c.req.path)) return next();
    if (web) return web(c, next);
    return pageLayer().then((m) => (web ??= m.webMiddleware(deps))(c, next));
  };
}

/** The answer when no route answers the path at all. */
function notFound(c: Context<AppEnv>): Response | Promise<Response> {
  return isPage(c.req.path)
    ? pageLayer().then((m) => m.errorPage(c, 404, m.NOT_FOUND))
    : c.json({ error: "not found" }, 404);
}

/**
 * A path some route answers, asked with another method, answers 405 with Allow: the methods of
 * the mounted routes of that path (`mountAreasOver` mounted every area over it). Null when
 * no route answers the path.
 */
function methodNotAllowed(
  app: Hono<AppEnv>,
  c: Context<AppEnv>,
): Response | Promise<Response> | null {
  // A trailing slash names the same resource here (/api/me/ as /api/me), as it always has.
  const path = c.req.path.length > 1 ? c.req.path.replace(/\/$/, "") : c.req.path;
  const allowed = methodsFor(app, path);
  if (allowed.length === 0 || allowed.includes(c.req.method)) return null;
  c.header("Allow", allowed.join(", "));
  const message = `method ${c.req.method} not allowed here`;
  return isPage(c.req.path)
    ? pageLayer().then((m) => m.errorPage(c, 405, message))
    : c.json({ error: message }, 405);
}

/**
 * The methods the app's router answers on this path with a route (not a middleware), in the
 * order the routes were added; GET brings HEAD.
 */
function methodsFor(app: Hono<AppEnv>, path: string): string[] {
  const routes = new Set<(typeof app.routes)[number]>();
  for (const method of new Set(app.routes.map((r) => r.method))) {
    if (method === "ALL") continue;
    for (const [[, route]] of app.router.match(method, path)[0]) {
      if (route.method === method) routes.add(route);
    }
  }
  const found = new Set(
    [...routes].sort((a, b) => app.routes.indexOf(a) - app.routes.indexOf(b)).map((r) => r.method),
  );
  if (found.has("GET")) found.add("HEAD");
  return [...found];
}

let pages: Promise<typeof import("./web/_web.tsx")> | null = null;
/** The page layer (web/_web.tsx), imported once; a failed import is retried next time. */
function pageLayer(): Promise<typeof import("./web/_web.tsx")> {
  pages ??= import("./web/_web.tsx").catch((err) => {
    pages = null;
    log("error", "page layer failed to load", { error: errorKind(err) });
    throw err;
  });
  return pages;
}

/** The answer of a page when even the page layer cannot load (a bad deploy). */
function unavailablePage(c: Context<AppEnv>): Response {
  c.header("Retry-After", "5");
  return c.text("This page is not available right now; try again in a moment.", 503);
}

/** What the OpenAPI document says about the service as a whole. */
const DOC: DocConfig = {
  info: {
    title: "Community catalogue service",
    version: "1",
    description: "Catalogue, accounts, watched services, files and public forms. " +
      "Errors are `{error}`; see docs/api.md.",
  },
  securitySchemes: {
    bearer: { type: "http", scheme: "bearer", description: "Device token from GET /api/verify" },
    serviceToken: { type: "apiKey", in: "header", name: "X-Service-Token" },
    hcApiKey: {
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
      description: "A key of the Healthchecks-compatible API (POST /api/me/api-keys)",
    },
  },
};

/** The OpenAPI document of every area, built from the zod schemas its routes validate with. */
async function openApiDocument(deps: Deps): Promise<object> {
  // The route layer (zod, its schemas) loads with the first area; the document may come first.
  const [{ errors }, { buildDocument }] = await Promise.all([
    import("./http/router.ts"),
    import("./http/openapi_doc.ts"),
  ]);
  const config: DocConfig = {
    ...DOC,
    servers: [{ url: deps.config.baseUrl, description: "this service" }],
    errorResponse: (code) => errors(code as 400)[code],
  };
  const apps: [string, Hono<AppEnv>][] = [];
  for (const [name, area] of Object.entries(ROUTE_AREAS)) {
    if (area.mount !== "/api") continue;
    const make = await area.load().catch((err) => {
      log("error", "route area failed to load", { area: name, error: errorKind(err) });
      throw new ApiError(503, "the API description is not available; try again later", {}, {
        "Retry-After": "5",
      });
    });
    apps.push(["/api", make(deps)]);
  }
  // Healthchecks' and Uptime Kuma's ping addresses (their own area, compat_pings): described here.
  const { compatDocRoutes } = await import("./api/compat_docs.ts");
  apps.push(["/", compatDocRoutes(deps)]);
  return buildDocument(apps, config);
}
