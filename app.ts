import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import { TrieRouter } from "hono/router/trie-router";
import { getPath } from "hono/utils/url";
import type { Deps } from "./lib/deps.ts";
import { answerError, ApiError } from "./http/errors.ts";
import { guardBody } from "./http/body.ts";
import type { AppEnv } from "./http/router.ts";
import type { DocConfig } from "./http/openapi.ts";
import { type AreaName, AREAS } from "./routes.ts";
import { healthz } from "./api/healthz.ts";
import type { TakenPing } from "./api/hooks.ts";
import { errorKind, log, logRequest } from "./lib/log.ts";
import { count, requestEnded, requestStarted } from "./lib/metrics.ts";

/** JSON bodies larger than this answer 413 (uploads have limits of their own). */
export const JSON_BODY_LIMIT = 1024 * 1024;
/** Routes that take raw bytes and enforce their own size limits. */
const RAW_BODY = [/^\/api\/me\/files$/, /^\/api\/me\/avatar$/];

/**
 * Builds the whole service over the given dependencies; nothing here touches globals. Each
 * route area of routes.ts is imported, built and mounted on the first request to one of its
 * paths, before that request is routed (`mountAreas`).
 */
export function createApp(deps: Deps): Hono<AppEnv> {
  // The trie router, named: Hono's default first tries its RegExpRouter, which cannot hold a
  // literal segment beside a parameter (/api/profiles/slug/:name next to /api/profiles/:id),
  // fails on the first request after compiling most of the routes, and falls back to this one.
  // It also takes routes after the first request, which the lazy mounts need.
  const app = new Hono<AppEnv>({ router: keptMatches(new TrieRouter()) });
  const mount = mountAreas(app, deps);
  /** Requests whose areas could not load: answered with the error by `methodsOrFailure`. */
  const unavailable = new WeakMap<Request, unknown>();

  // Heartbeats, the hottest request: a route of the app itself, registered first, so it runs
  // before the app's middleware, the page layer, the body guards and the route areas (api/hooks.ts
  // `pingRoute`, loaded on the first ping), and counted, timed and logged here as `measured` does
  // for every other request. What it does not take goes on to them and to the hooks area's
  // routes, as does everything when its module cannot load (the area then answers the failure).
  // Healthchecks' and Uptime Kuma's ping addresses (api/compat_pings.ts) take the same way.
  app.on(
    ["GET", "POST"],
    PING_ROUTES,
    fastRoute(() => import("./api/hooks.ts").then((m) => m.pingRoute(deps, JSON_BODY_LIMIT))),
  );
  const compat = fastRoute(() => import("./api/compat_pings.ts").then((m) => m.compatRoute(deps)));
  app.all("/ping/*", compat);
  app.all("/api/push/*", compat);
  app.use("*", measured);
  // Pages, JSON and static files go out gzip- or deflate-compressed when the client accepts it
  // (Hono's compress: text types only, a known length under 1 KB, HEAD and 206 left alone; it adds
  // Vary and weakens an ETag). The pings above answer before it: a few bytes, the hottest path.
  app.use("*", compress());
  // Loaded on the first scrape: a process nobody scrapes never evaluates it.
  let metrics: Promise<(c: Context<AppEnv>) => Promise<Response>> | null = null;
  app.get("/metrics", async (c) => {
    metrics ??= import("./http/metrics.ts").then((m) => m.metricsRoute(deps));
    return await (await metrics)(c);
  });
  app.use("*", pageMiddleware(deps));
  app.use("*", methodsOrFailure(app, mount, unavailable));
  app.use("/api/*", limitedBodies());

  let doc: object | null = null;
  app.get("/api/openapi.json", async (c) => c.json(doc ??= await openApiDocument(deps)));
  // Asked first and most often by machines: answered without loading an area.
  app.get("/api/healthz", healthz(deps));

  app.notFound((c) =>
    isPage(c.req.path)
      ? pageLayer().then((m) => m.errorPage(c, 404, m.NOT_FOUND))
      : c.json({ error: "not found" }, 404)
  );
  app.onError((err, c) =>
    isPage(c.req.path)
      ? pageLayer().then((m) => m.answerPageError(err, c), () => unavailablePage(c))
      : answerError(err, c)
  );

  // The lazy mounts happen before Hono routes the request, so it is routed to the areas'
  // own routes (and middleware) like any other request.
  const dispatch = app.fetch;
  app.fetch = async (req, ...rest) => {
    // A failed import (a module missing or unreadable after a bad deploy) is answered by the
    // app's error handling, as any error of this request: retried by the next request.
    const mounting = mount(req.method, getPath(req));
    if (mounting) await mounting.catch((err) => unavailable.set(req, err));
    return await dispatch(req, ...rest);
  };
  return app;
}

/**
 * A route of the app that answers the requests `load`'s function takes, loaded on the first
 * one, counted, timed and logged as `measured` does; the others go on (`next`).
 */
function fastRoute(
  load: () => Promise<(c: Context<AppEnv>) => TakenPing | null>,
): MiddlewareHandler<AppEnv> {
  let take: ((c: Context<AppEnv>) => TakenPing | null) | null = null;
  let loading: Promise<unknown> | null = null;
  return async (c, next) => {
    if (!take) {
      loading ??= load().then((f) => (take = f), () => (loading = null));
      await loading;
    }
    const taken = take?.(c);
    if (!taken) return await next();
    const t0 = performance.now();
    const stats = requestStarted(c.req.method, taken.route);
    let status = 500;
    try {
      const res = await taken.answer;
      status = res.status;
      return res;
    } finally {
      requestDone(stats, c.req.method, taken.route, status, t0);
    }
  };
}

/** Counts, times and logs a finished request by its route pattern. */
function requestDone(
  stats: ReturnType<typeof requestStarted>,
  method: string,
  route: string,
  status: number,
  t0: number,
): void {
  const seconds = (performance.now() - t0) / 1000;
  requestEnded(stats, status, seconds);
  if (route === HOOK_ROUTE) count("catalogue_heartbeats_total", HEARTBEAT_OUTCOME(status));
  // The route pattern, never the raw path: a path can hold a hook key or a token.
  logRequest(method, route, status, Math.round(seconds * 10_000) / 10);
}

/** Counts, times and logs every request by its route pattern; sets nosniff on every answer. */
const measured: MiddlewareHandler<AppEnv> = async (c, next) => {
  const t0 = performance.now();
  const route = routePattern(c);
  const stats = requestStarted(c.req.method, route);
  try {
    await next();
  } finally {
    requestDone(stats, c.req.method, route, c.res.status, t0);
  }
  // Set on the finished response itself: c.header() after next() copies the whole Response.
  setHeader(c, "X-Content-Type-Options", "nosniff");
};

/**
 * Pages and static files: security headers, the cross-site check, the layout, the web
 * session. The JSON API never sees the cookie. The page layer (JSX, its middleware) is
 * imported on the first page request: a process that serves only the API never loads it.
 */
function pageMiddleware(deps: Deps): MiddlewareHandler<AppEnv> {
  let web: MiddlewareHandler<AppEnv> | null = null;
  return async (c, next) => {
    if (!isPage(c.req.path)) return await next();
    web ??= (await pageLayer()).webMiddleware(deps);
    return await web(c, next);
  };
}

/**
 * An area that could not load answers here, through the app's error handling. A path some
 * route answers, asked with another method, answers 405 with Allow: the areas of the path that
 * answer other methods only are mounted first, then the mounted routes say.
 */
function methodsOrFailure(
  app: Hono<AppEnv>,
  mount: Mount,
  unavailable: WeakMap<Request, unknown>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (unavailable.has(c.req.raw)) throw unavailable.get(c.req.raw);
    await next();
    if (c.res.status !== 404 || c.error) return;
    // A trailing slash names the same resource here (/api/me/ as /api/me), as it always has.
    const path = c.req.path.length > 1 ? c.req.path.replace(/\/$/, "") : c.req.path;
    await mount(c.req.method, path, true)?.catch(() => {});
    const allowed = methodsFor(app, path);
    if (allowed.length === 0 || allowed.includes(c.req.method)) return;
    c.header("Allow", allowed.join(", "));
    const message = `method ${c.req.method} not allowed here`;
    c.res = isPage(c.req.path)
      ? await (await pageLayer()).errorPage(c, 405, message)
      : c.json({ error: message }, 405);
  };
}

/** JSON bodies: read through `guardBody`, over JSON_BODY_LIMIT answered 413. */
function limitedBodies(): MiddlewareHandler<AppEnv> {
  const limited = bodyLimit({
    maxSize: JSON_BODY_LIMIT,
    onError: (c) => c.json({ error: `body over ${JSON_BODY_LIMIT} bytes` }, 413),
  });
  return async (c, next) => {
    // Most calls send no body: nothing to limit or guard.
    if (!c.req.raw.body) return await next();
    // Raw uploads read their own streams and answer a body that ends early themselves.
    if (RAW_BODY.some((r) => r.test(c.req.path))) return await next();
    c.req.raw = guardBody(c.req.raw);
    return await limited(c, next);
  };
}

/** Router answers kept, by method and path, until a route is added (or the bound is reached). */
const MATCHES_KEPT = 4096;

/**
 * The trie router with its answers kept by method and path. Hono's trie search builds its
 * answer anew for every request (arrays and a params object per matching handler: the largest
 * allocation of a heartbeat ping, a tenth of its bytes); an answer depends only on the routes
 * and the path, and nothing changes one after it is made. Adding a route (the lazy mounts)
 * forgets them all. Paths carry ids and keys, so the set is emptied when full, as the mounts'
 * `ready` set is.
 */
function keptMatches<T>(router: TrieRouter<T>): TrieRouter<T> {
  const kept = new Map<string, ReturnType<TrieRouter<T>["match"]>>();
  const add = router.add.bind(router);
  const match = router.match.bind(router);
  router.add = (method, path, handler) => {
    kept.clear();
    add(method, path, handler);
  };
  router.match = (method, path) => {
    const id = `${method} ${path}`;
    let found = kept.get(id);
    if (!found) {
      if (kept.size >= MATCHES_KEPT) kept.clear();
      kept.set(id, found = match(method, path));
    }
    return found;
  };
  return router;
}

const methodTables = new WeakMap<Hono<AppEnv>, { size: number; table: TrieRouter<string> }>();

/** Methods the app's mounted routes answer on this path (GET brings HEAD), for 405's Allow. */
function methodsFor(app: Hono<AppEnv>, path: string): string[] {
  let cached = methodTables.get(app);
  if (cached?.size !== app.routes.length) {
    const table = new TrieRouter<string>();
    for (const r of app.routes) if (r.method !== "ALL") table.add("ALL", r.path, r.method);
    methodTables.set(app, cached = { size: app.routes.length, table });
  }
  const found = new Set(cached.table.match("ALL", path)[0].map(([method]) => method));
  if (found.has("GET")) found.add("HEAD");
  return [...found];
}

/**
 * Mounts the areas a request needs (`everyMethod`: those of its path, whatever their method);
 * null when they are all mounted already (the common request waits for nothing).
 */
type Mount = (method: string, path: string, everyMethod?: boolean) => Promise<void> | null;

/**
 * The lazy mounts: the areas of routes.ts whose paths match a request (for its method, or for
 * any method with `everyMethod`), imported once (concurrent requests share the import), built over
 * `deps` and mounted with `app.route` in the table's order. A failed import is forgotten, so
 * the next request tries again.
 */
function mountAreas(app: Hono<AppEnv>, deps: Deps): Mount {
  const byMethod = new TrieRouter<AreaName>();
  const anyMethod = new TrieRouter<AreaName>();
  const names = Object.keys(AREAS) as AreaName[];
  for (const name of names) {
    for (const entry of AREAS[name].paths) {
      const [method, path] = entry.includes(" ") ? entry.split(" ") : ["ALL", entry];
      byMethod.add(method, path, name);
      anyMethod.add("ALL", path, name);
    }
  }
  const done = new Map<AreaName, true>();
  built.set(app, done);
  const loading = new Map<AreaName, Promise<(deps: Deps) => Hono<AppEnv>>>();
  const load = (name: AreaName) => {
    let make = loading.get(name);
    if (!make) {
      make = AREAS[name].load().catch((err) => {
        loading.delete(name);
        log("error", "route area failed to load", { area: name, error: errorKind(err) });
        throw new ApiError(503, "this part of the service is not available; try again later", {}, {
          "Retry-After": "5",
        });
      });
      loading.set(name, make);
    }
    return make;
  };
  // Requests whose areas are all mounted, so that the common request skips the table. Bounded:
  // paths carry ids, so the set is emptied now and then.
  const ready = new Set<string>();
  const mount: Mount = (method, path, everyMethod = false) => {
    const id = `${everyMethod ? "*" : method} ${path}`;
    if (ready.has(id)) return null;
    const table = everyMethod ? anyMethod : byMethod;
    const found = table.match(method === "HEAD" ? "GET" : method, path)[0];
    const wanted = new Set(found.map(([name]) => name));
    const missing = names.filter((name) => wanted.has(name) && !done.has(name));
    if (missing.length === 0) {
      if (ready.size >= 4096) ready.clear();
      ready.add(id);
      return null;
    }
    return mountMissing(missing);
  };
  const mountMissing = async (missing: AreaName[]) => {
    const makes = await Promise.all(missing.map(load));
    for (const [i, name] of missing.entries()) {
      if (done.has(name)) continue; // mounted meanwhile by a concurrent request
      app.route(AREAS[name].mount, makes[i](deps));
      done.set(name, true);
    }
  };
  mounts.set(app, mount);
  return mount;
}

/** The route patterns of heartbeat pings (api/hooks.ts `pingRoute`). */
const PING_ROUTES = ["/api/hooks/:key", "/api/hooks/:key/:signal"];
const HOOK_ROUTE = PING_ROUTES[0];
const OUTCOMES: Record<number, string> = {
  200: 'outcome="stored"',
  404: 'outcome="unknown_key"',
  429: 'outcome="limited"',
};
const HEARTBEAT_OUTCOME = (status: number) => OUTCOMES[status] ?? 'outcome="refused"';

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
const mounts = new WeakMap<Hono<AppEnv>, Mount>();

/** The areas an app has built so far, in the order it built them. */
export function builtAreas(app: Hono<AppEnv>): AreaName[] {
  return [...built.get(app)?.keys() ?? []];
}

/** Mounts every area now (what a request to each of their paths would do): all routes listed. */
export async function mountEveryArea(app: Hono<AppEnv>): Promise<void> {
  for (const area of Object.values(AREAS)) {
    for (const entry of area.paths) await mounts.get(app)!("GET", entry.split(" ").at(-1)!, true);
  }
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
  // Healthchecks' and Uptime Kuma's ping addresses, answered on the fast path above.
  const { compatDocRoutes } = await import("./api/compat_docs.ts");
  root.route("/", compatDocRoutes(deps));
  return buildDocument(root.defs, config);
}
