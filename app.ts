import { Hono } from "hono";
import type { Context, MiddlewareHandler, Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { TrieRouter } from "hono/router/trie-router";
import type { Deps } from "./lib/deps.ts";
import { answerError, ApiError } from "./http/errors.ts";
import { guardBody } from "./http/body.ts";
import type { AppEnv } from "./http/router.ts";
import type { DocConfig } from "./http/openapi.ts";
import { type AreaName, AREAS } from "./routes.ts";
import { ROUTES } from "./routes_manifest.ts";
import { healthz } from "./api/healthz.ts";
import { errorKind, log, logRequest } from "./lib/log.ts";
import { count, requestEnded, requestStarted } from "./lib/metrics.ts";

/** JSON bodies larger than this answer 413 (uploads have limits of their own). */
export const JSON_BODY_LIMIT = 1024 * 1024;
/** Routes that take raw bytes and enforce their own size limits. */
const RAW_BODY = [/^\/api\/me\/files$/, /^\/api\/me\/avatar$/];

/**
 * Builds the whole service over the given dependencies; nothing here touches globals. Each
 * route area (routes.ts) is imported and built on the first request that needs it, and
 * that request is handed to it; routes_manifest.ts says which area answers what.
 */
export function createApp(deps: Deps): Hono<AppEnv> {
  // The trie router, named: Hono's default first tries its RegExpRouter, which cannot hold a
  // literal segment beside a parameter (/api/profiles/slug/:name next to /api/profiles/:id),
  // fails on the first request after compiling most of the routes, and falls back to this one.
  const app = new Hono<AppEnv>({ router: new TrieRouter() });

  app.use("*", async (c, next) => {
    const t0 = performance.now();
    const route = routePattern(c);
    const stats = requestStarted(c.req.method, route);
    try {
      await next();
    } finally {
      const status = c.res.status;
      const seconds = (performance.now() - t0) / 1000;
      requestEnded(stats, status, seconds);
      if (route === HOOK_ROUTE) count("catalogue_heartbeats_total", HEARTBEAT_OUTCOME(status));
      // The route pattern, never the raw path: a path can hold a hook key or a token.
      logRequest(c.req.method, route, status, Math.round(seconds * 10_000) / 10);
    }
    // Set on the finished response itself: c.header() after next() copies the whole Response.
    setHeader(c, "X-Content-Type-Options", "nosniff");
  });

  // Loaded on the first scrape: a process nobody scrapes never evaluates it.
  let metrics: Promise<(c: Context<AppEnv>) => Promise<Response>> | null = null;
  app.get("/metrics", async (c) => {
    metrics ??= import("./http/metrics.ts").then((m) => m.metricsRoute(deps));
    return await (await metrics)(c);
  });

  // Pages and static files: security headers, the cross-site check, the layout, the web
  // session. The JSON API never sees the cookie. The page layer (JSX, its middleware) is
  // imported on the first page request: a process that serves only the API never loads it.
  let web: MiddlewareHandler<AppEnv> | null = null;
  app.use("*", async (c, next) => {
    if (!isPage(c.req.path)) return await next();
    web ??= (await pageLayer()).webMiddleware(deps);
    return await web(c, next);
  });

  const limited = bodyLimit({
    maxSize: JSON_BODY_LIMIT,
    onError: (c) => c.json({ error: `body over ${JSON_BODY_LIMIT} bytes` }, 413),
  });
  app.use("/api/*", async (c, next) => {
    // Most calls send no body: nothing to limit or guard.
    if (!c.req.raw.body) return await next();
    // Raw uploads read their own streams and answer a body that ends early themselves.
    if (RAW_BODY.some((r) => r.test(c.req.path))) return await next();
    c.req.raw = guardBody(c.req.raw);
    return await limited(c, next);
  });

  const areas = new Map<AreaName, Promise<Map<string, Handler[]>>>();
  built.set(app, areas);
  const area = (name: AreaName) => {
    let chains = areas.get(name);
    if (!chains) {
      chains = AREAS[name].load().then((make) => handlerChains(areaApp(name, make, deps)))
        .catch((err) => {
          // A failed import (a module missing or unreadable after a bad deploy) is retried by
          // the next request rather than remembered; meanwhile the area does not answer.
          areas.delete(name);
          log("error", "route area failed to load", { area: name, error: errorKind(err) });
          throw new ApiError(
            503,
            "this part of the service is not available; try again later",
            {},
            {
              "Retry-After": "5",
            },
          );
        });
      chains.catch(() => {});
      areas.set(name, chains);
    }
    return chains;
  };

  let doc: object | null = null;
  app.get("/api/openapi.json", async (c) => c.json(doc ??= await openApiDocument(deps)));

  for (const [name, method, path] of ROUTES) {
    const id = `${method} ${path}`;
    // Asked first and most often by machines: answered without the route layer or an area.
    if (id === "GET /api/healthz") {
      app.get(path, healthz(deps));
      continue;
    }
    // The area's own middleware, validators and handler run on this request's context, as if
    // they had been registered here: same params, same error handling, no second routing.
    app.on(method, path, async (c, next) => {
      const chain = (await area(name)).get(id);
      if (!chain) return c.json({ error: "not found" }, 404);
      return await runChain(chain, c, next);
    });
  }

  app.notFound((c) => {
    const allowed = methodsFor(app, c.req.path);
    const page = isPage(c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      c.header("Allow", allowed.join(", "));
      const message = `method ${c.req.method} not allowed here`;
      return page
        ? pageLayer().then((m) => m.errorPage(c, 405, message))
        : c.json({ error: message }, 405);
    }
    return page
      ? pageLayer().then((m) => m.errorPage(c, 404, m.NOT_FOUND))
      : c.json({ error: "not found" }, 404);
  });
  app.onError((err, c) =>
    isPage(c.req.path)
      ? pageLayer().then((m) => m.answerPageError(err, c), () => unavailablePage(c))
      : answerError(err, c)
  );
  return app;
}

const HOOK_ROUTE = "/api/hooks/:key";
const HEARTBEAT_OUTCOME = (status: number) =>
  `outcome="${
    status === 200
      ? "stored"
      : status === 404
      ? "unknown_key"
      : status === 429
      ? "limited"
      : "refused"
  }"`;

/**
 * The pattern of the route that answers this request (its last matched handler that is not a
 * middleware), or "unmatched"; known before the handlers run, so in-flight counts are right.
 */
function routePattern(c: Context<AppEnv>): string {
  const matched = c.req.matchedRoutes;
  for (let i = matched.length - 1; i >= 0; i--) {
    if (matched[i].method !== "ALL") return matched[i].path;
  }
  return "unmatched";
}

/** Paths served by the JSON API; everything else is a page or a static file. */
const isApiPath = (path: string) => path === "/api" || path.startsWith("/api/");

/** Paths answered with HTML pages: all but the JSON API and the metrics. */
const isPage = (path: string) => !isApiPath(path) && path !== "/metrics";

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

/** Sets a header on the answer in place; a Response with immutable headers is copied instead. */
function setHeader(c: Context<AppEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

const built = new WeakMap<Hono<AppEnv>, Map<AreaName, unknown>>();

/** The areas an app has built so far, in the order it built them. */
export function builtAreas(app: Hono<AppEnv>): AreaName[] {
  return [...built.get(app)?.keys() ?? []];
}

type Handler = (c: Context<AppEnv>, next: Next) => Response | void | Promise<Response | void>;

/** Each route's handlers (guards, validators, the handler) by `METHOD path`, in order. */
function handlerChains(area: Hono<AppEnv>): Map<string, Handler[]> {
  const chains = new Map<string, Handler[]>();
  for (const r of area.routes) {
    const id = `${r.method} ${r.path}`;
    const chain = chains.get(id) ?? [];
    chain.push(r.handler as Handler);
    chains.set(id, chain);
  }
  return chains;
}

/** Runs handlers as Hono's compose does: each gets `next` to the following one. */
async function runChain(chain: Handler[], c: Context<AppEnv>, next: Next): Promise<Response> {
  const step = async (i: number): Promise<void> => {
    const handler = chain[i];
    if (!handler) return await next();
    const res = await handler(c, () => step(i + 1));
    if (res instanceof Response && !c.finalized) c.res = res;
  };
  await step(0);
  return c.res;
}

/**
 * One area's routes at its mount point. Only its route list is used (the app runs the
 * handlers on its own context), so it needs no error or not-found handling of its own.
 */
export function areaApp(
  name: AreaName,
  make: (deps: Deps) => Hono<AppEnv>,
  deps: Deps,
): Hono<AppEnv> {
  return new Hono<AppEnv>().route(AREAS[name].mount, make(deps));
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
  },
};

/** The OpenAPI document of every area, built from the zod schemas its routes validate with. */
async function openApiDocument(deps: Deps): Promise<object> {
  // The route layer (zod, its schemas) loads with the first area; the document may come first.
  const [{ errors, router }, { buildDocument }] = await Promise.all([
    import("./http/router.ts"),
    import("./http/openapi.ts"),
  ]);
  const config: DocConfig = {
    ...DOC,
    servers: [{ url: deps.config.baseUrl, description: "this service" }],
    errorResponse: (code) => errors(code as 400)[code],
  };
  const api = router();
  for (const name of Object.keys(AREAS) as AreaName[]) {
    if (AREAS[name].mount !== "/api") continue;
    const make = await AREAS[name].load().catch((err) => {
      log("error", "route area failed to load", { area: name, error: errorKind(err) });
      throw new ApiError(503, "the API description is not available; try again later", {}, {
        "Retry-After": "5",
      });
    });
    api.route("/", make(deps));
  }
  const root = router();
  root.route("/api", api);
  return buildDocument(root.defs, config);
}

type Matcher = { method: string; re: RegExp };
const matchers = new WeakMap<object, Matcher[]>();

/** Methods that some route answers for this path, for 405 and its Allow header. */
function methodsFor(app: Hono<AppEnv>, path: string): string[] {
  let list = matchers.get(app);
  if (!list) {
    list = app.routes
      .filter((r) => r.method !== "ALL" && r.path.startsWith("/"))
      .map((r) => ({
        method: r.method,
        re: new RegExp(
          "^" + r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+")
            .replace(/\\\*|\*/g, ".*") +
            "/?$",
        ),
      }));
    matchers.set(app, list);
  }
  const found = new Set(list.filter((m) => m.re.test(path)).map((m) => m.method));
  if (found.has("GET")) found.add("HEAD");
  return [...found];
}
