import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { compress, COMPRESSIBLE_CONTENT_TYPE_REGEX } from "hono/compress";
import { TrieRouter } from "hono/router/trie-router";
import type { Deps } from "./lib/deps.ts";
import { answerError, ApiError } from "./http/errors.ts";
import type { AppEnv, Taken } from "./http/router.ts";
import type { DocConfig } from "./http/openapi.ts";
import { healthz } from "./api/healthz.ts";
import { errorKind, log, logRequest } from "./lib/log.ts";
import { requestEnded, requestStarted } from "./lib/metrics.ts";
import { joinBytes } from "./lib/bytes.ts";

/** A route area: a file of api/ or web/ whose routes hang under `mount`. */
interface Area {
  /** Where its routes hang: the API areas under /api (the document lists them there), pages at /. */
  mount: "/api" | "/";
  /**
   * The prefixes it answers under (`/x/*` is `/x` and everything below it); the area declares
   * its routes itself. A request under one of them mounts it first.
   */
  under: readonly string[];
  load(): Promise<(deps: Deps) => Hono<AppEnv>>;
  /**
   * The area's hottest requests (the heartbeats), taken ahead of the app-wide middleware: what
   * it takes it answers (counted, timed and logged as every request); what it does not (null)
   * goes on to the middleware and the area's routes, which answer it the same way.
   */
  front?(): Promise<(deps: Deps) => (c: Context<AppEnv>) => Taken | null>;
}

/**
 * The route areas, each imported, built and mounted (Hono's `app.route`) on the first request
 * under one of its prefixes: a process evaluates only the areas it serves (an isolate on Deno
 * Deploy often serves one or two). Two areas under one prefix are mounted in this order (GET /me:
 * web/sign_in.tsx takes `?verify=` and hands the rest on to web/me.tsx). tests/app_test.ts checks
 * that every route of an area lies under one of its prefixes.
 */
export const AREAS = {
  // GET /api/healthz itself is answered by the app (api/healthz.ts) without loading this area.
  health: api(["/api/audit/*"], () => import("./api/health.ts").then((m) => m.healthRoutes)),
  sign_in: api(["/api/verify/*"], () => import("./api/sign_in.ts").then((m) => m.signInRoutes)),
  devices: api(
    ["/api/me/devices/*", "/api/me/token"],
    () => import("./api/devices.ts").then((m) => m.deviceRoutes),
  ),
  me: api(["/api/me"], () => import("./api/me.ts").then((m) => m.meRoutes)),
  profile: api(
    ["/api/me", "/api/me/avatar", "/api/avatars/*", "/api/profiles/*"],
    () => import("./api/profile.ts").then((m) => m.profileRoutes),
  ),
  journal: api(
    ["/api/me/journal/*"],
    () => import("./api/journal.ts").then((m) => m.journalRoutes),
  ),
  search: api(["/api/search"], () => import("./api/search.ts").then((m) => m.searchRoutes)),
  applications: api(
    ["/api/me/apply", "/api/applications/*"],
    () => import("./api/applications.ts").then((m) => m.applicationRoutes),
  ),
  invites: api(
    ["/api/me/invites", "/api/invites"],
    () => import("./api/invites.ts").then((m) => m.inviteRoutes),
  ),
  actors: api(["/api/actors"], () => import("./api/actors.ts").then((m) => m.actorRoutes)),
  export: api(
    ["/api/me", "/api/me/export"],
    () => import("./api/export.ts").then((m) => m.exportRoutes),
  ),
  catalogue: api(
    ["/api/me/modules/*", "/api/modules/*", "/api/points", "/api/catalogue"],
    () => import("./api/catalogue.ts").then((m) => m.catalogueRoutes),
  ),
  hooks: {
    ...api(["/api/hooks/*"], () => import("./api/hooks.ts").then((m) => m.hookRoutes)),
    front: () => import("./api/hooks.ts").then((m) => m.hookFront),
  },
  // Healthchecks' and Uptime Kuma's ping addresses, answered as those products answer them.
  compat_pings: {
    mount: "/",
    under: ["/ping/*", "/api/push/*"],
    load: () => import("./api/compat_pings.ts").then((m) => m.compatPingRoutes),
    front: () => import("./api/compat_pings.ts").then((m) => m.compatRoute),
  },
  status: api(
    ["/api/me/status-page/*", "/api/me/services/*", "/api/status/*", "/api/badges/*"],
    () => import("./api/status.ts").then((m) => m.statusRoutes),
  ),
  channels: api(
    ["/api/me/channels/*", "/api/me/alert-settings"],
    () => import("./api/channels.ts").then((m) => m.channelRoutes),
  ),
  maintenance: api(
    ["/api/me/maintenance/*"],
    () => import("./api/maintenance.ts").then((m) => m.maintenanceRoutes),
  ),
  incidents: api(
    ["/api/me/incidents/*"],
    () => import("./api/incidents.ts").then((m) => m.incidentRoutes),
  ),
  reports: api(
    ["/api/me/reports/*"],
    () => import("./api/reports.ts").then((m) => m.reportRoutes),
  ),
  api_keys: api(
    ["/api/me/api-keys/*"],
    () => import("./api/api_keys.ts").then((m) => m.apiKeyRoutes),
  ),
  // Healthchecks' Management API: /api/v1/, /api/v2/ and /api/v3/ (its routes check the version).
  hc: api(
    [
      "/api/:version/checks/*",
      "/api/:version/channels/*",
      "/api/:version/badges/*",
      "/api/:version/status/*",
    ],
    () => import("./api/hc.ts").then((m) => m.hcRoutes),
  ),
  services: api(
    ["/api/me/services/*", "/api/services"],
    () => import("./api/services.ts").then((m) => m.servicesRoutes),
  ),
  ping_keys: api(
    ["/api/me/ping-key", "/api/me/services/*"],
    () => import("./api/ping_keys.ts").then((m) => m.pingKeyRoutes),
  ),
  imports: api(["/api/me/import"], () => import("./api/imports.ts").then((m) => m.importRoutes)),
  files: api(
    ["/api/me/files/*", "/api/files/*"],
    () => import("./api/files.ts").then((m) => m.filesRoutes),
  ),
  requests: api(
    ["/api/requests/*"],
    () => import("./api/requests.ts").then((m) => m.requestRoutes),
  ),
  contributions: api(
    ["/api/contributions/*"],
    () => import("./api/contributions.ts").then((m) => m.contributionRoutes),
  ),
  // The pages (web/): routes only, under the middleware of web/_web.tsx.
  web_static: page(["/static/*"], () => import("./web/static.ts").then((m) => m.staticRoutes)),
  web_home: page(["/"], () => import("./web/home.tsx").then((m) => m.homePages)),
  web_sign_in: page(
    ["/sign-in/*", "/me", "/me/verify", "/sign-out"],
    () => import("./web/sign_in.tsx").then((m) => m.signInPages),
  ),
  web_sign_in_providers: page(
    ["/sign-in/*", "/me/sign-in-methods/*"],
    () => import("./web/sign_in_providers.tsx").then((m) => m.providerPages),
  ),
  web_passkeys: page(
    ["/sign-in/*"],
    () => import("./web/passkeys.tsx").then((m) => m.passkeySignInPages),
  ),
  web_me_sign_in_methods: page(
    ["/me/sign-in-methods/*", "/me/passkeys/*"],
    () => import("./web/me_sign_in_methods.tsx").then((m) => m.signInMethodPages),
  ),
  web_modules: page(
    ["/catalogue", "/modules", "/modules/*"],
    () => import("./web/modules.tsx").then((m) => m.modulePages),
  ),
  web_feeds: page(
    ["/feed", "/atom.xml", "/rss", "/rss.xml", "/feed.xml"],
    () => import("./web/feeds.ts").then((m) => m.feedPages),
  ),
  // OAI-PMH: another protocol's XML, outside the page layer (harvesters POST without Origin).
  oai: {
    mount: "/",
    under: ["/oai/*"],
    load: () => import("./api/oai.ts").then((m) => m.oaiRoutes),
  },
  web_status: page(["/status/*"], () => import("./web/status.tsx").then((m) => m.statusPages)),
  web_public: page(
    ["/people/*", "/search", "/contribute/*", "/robots.txt", "/sitemap.xml"],
    () => import("./web/public.tsx").then((m) => m.publicPages),
  ),
  web_forms: page(
    ["/request/*", "/contribute/*"],
    () => import("./web/forms.tsx").then((m) => m.formPages),
  ),
  web_api_reference: page(
    ["/api-reference"],
    () => import("./web/api_reference.tsx").then((m) => m.apiReferencePages),
  ),
  web_me: page(["/me"], () => import("./web/me.tsx").then((m) => m.mePages)),
  web_me_profile: page(
    ["/me/profile", "/me/avatar/*"],
    () => import("./web/me_profile.tsx").then((m) => m.profilePages),
  ),
  web_me_journal: page(
    ["/me/journal/*"],
    () => import("./web/me_journal.tsx").then((m) => m.journalPages),
  ),
  web_me_devices: page(
    ["/me/devices/*"],
    () => import("./web/me_devices.tsx").then((m) => m.devicePages),
  ),
  web_compat: page(
    ["/me/ping-key", "/me/services/*"],
    () => import("./web/me_compat.tsx").then((m) => m.compatPages),
  ),
  web_me_services: page(
    ["/me/services/*"],
    () => import("./web/me_services.tsx").then((m) => m.servicePages),
  ),
  web_maintenance: page(
    ["/me/maintenance/*"],
    () => import("./web/me_maintenance.tsx").then((m) => m.maintenancePages),
  ),
  web_incidents: page(
    ["/me/incidents/*"],
    () => import("./web/me_incidents.tsx").then((m) => m.incidentPages),
  ),
  web_reports: page(
    ["/me/reports/*"],
    () => import("./web/me_reports.tsx").then((m) => m.reportPages),
  ),
  web_watch_board: page(
    ["/watch/*"],
    () => import("./web/watch.tsx").then((m) => m.watchBoardPages),
  ),
  web_watch: page(
    ["/me/services/*", "/me/channels/*", "/me/status-page/*"],
    () => import("./web/me_watch.tsx").then((m) => m.watchPages),
  ),
  web_api_keys: page(
    ["/me/api-keys/*"],
    () => import("./web/me_api_keys.tsx").then((m) => m.apiKeyPages),
  ),
  web_me_files: page(["/me/files/*"], () => import("./web/me_files.tsx").then((m) => m.filePages)),
  web_me_data: page(
    ["/me/data/*", "/erased"],
    () => import("./web/me_data.tsx").then((m) => m.dataPages),
  ),
  web_me_standing: page(
    ["/me/standing/*"],
    () => import("./web/me_standing.tsx").then((m) => m.standingPages),
  ),
  web_me_work: page(["/me/work/*"], () => import("./web/me_work.tsx").then((m) => m.workPages)),
  web_team: page(["/team/*"], () => import("./web/team.tsx").then((m) => m.teamPages)),
} satisfies Record<string, Area>;

export type AreaName = keyof typeof AREAS;

function api(under: string[], load: Area["load"]): Area {
  return { mount: "/api", under, load };
}

function page(under: string[], load: Area["load"]): Area {
  return { mount: "/", under, load };
}

/**
 * Builds the whole service over the given dependencies; nothing here touches globals. Each
 * area of AREAS is imported, built and mounted on the first request under one of its prefixes.
 */
export function createApp(deps: Deps): Hono<AppEnv> {
  // The trie router, named: Hono's default first tries its RegExpRouter, which cannot hold a
  // literal segment beside a parameter (/api/profiles/slug/:name next to /api/profiles/:id),
  // fails on the first request after compiling most of the routes, and falls back to this one.
  // It also takes routes after the first request, which the lazy mounts need.
  const app = new Hono<AppEnv>({ router: new TrieRouter() });
  const mounts = new Map<AreaName, () => Promise<void>>();
  areasOf.set(app, { built: [], mounts });
  // First of all: a request under a prefix whose areas are not all mounted yet mounts them, then
  // is routed again. One middleware per prefix, whatever the number of areas under it.
  const under = new Map<string, LazyArea[]>();
  for (const name of Object.keys(AREAS) as AreaName[]) {
    const area = lazyArea(app, deps, name);
    mounts.set(name, area.mount);
    for (const prefix of AREAS[name].under) under.set(prefix, [...under.get(prefix) ?? [], area]);
  }
  for (const [prefix, areas] of under) app.use(prefix, lazyMount(app, areas));
  app.use("*", measured);
  // Pages, JSON and static files go out gzip- or deflate-compressed when the client accepts it
  // (Hono's compress: text types only, an answer under 1 KB, HEAD and 206 left alone; it adds
  // Vary and weakens an ETag). Pings are answered by the hooks' front, ahead of it, as they are.
  app.use("*", compression());
  // Loaded on the first scrape: a process nobody scrapes never evaluates it.
  let metrics: Promise<(c: Context<AppEnv>) => Promise<Response>> | null = null;
  app.get("/metrics", async (c) => {
    metrics ??= import("./http/metrics.ts").then((m) => m.metricsRoute(deps));
    return await (await metrics)(c);
  });
  app.use("*", pageMiddleware(deps));

  let doc: object | null = null;
  app.get("/api/openapi.json", async (c) => c.json(doc ??= await openApiDocument(deps)));
  // Asked first and most often by machines: answered without loading an area.
  app.get("/api/healthz", healthz(deps));

  // No route answers this method here: 405 with Allow when routes answer the path with others.
  app.notFound((c) => methodNotAllowed(app, c) ?? notFound(c));
  app.onError((err, c) =>
    isPage(c.req.path)
      ? pageLayer().then((m) => m.answerPageError(err, c), () => unavailablePage(c))
      : answerError(err, c)
  );
  return app;
}

/** One area of AREAS as the lazy mounts see it. */
interface LazyArea {
  /** Imports, builds and mounts the area, once (concurrent calls share the import). */
  mount(): Promise<void>;
  mounted(): boolean;
  /** The area's front, once mounted: what it takes it answers, else null. */
  front(c: Context<AppEnv>): Taken | null;
}

/**
 * An area imported, built and mounted with `app.route` on its first `mount`. A failed import
 * answers 503 and is forgotten, so the next request tries again.
 */
function lazyArea(app: Hono<AppEnv>, deps: Deps, name: AreaName): LazyArea {
  const area: Area = AREAS[name];
  let mounted = false;
  let front: ((c: Context<AppEnv>) => Taken | null) | undefined;
  let loading: Promise<void> | null = null;
  return {
    mount: () =>
      loading ??= Promise.all([area.load(), area.front?.()]).then(([make, makeFront]) => {
        app.route(area.mount, make(deps));
        front = makeFront?.(deps);
        mounted = true;
        areasOf.get(app)!.built.push(name);
      }, (err) => {
        loading = null;
        log("error", "route area failed to load", { area: name, error: errorKind(err) });
        throw new ApiError(503, "this part of the service is not available; try again later", {}, {
          "Retry-After": "5",
        });
      }),
    mounted: () => mounted,
    front: (c) => front?.(c) ?? null,
  };
}

/**
 * The lazy mount of one prefix, before everything else: the first request under it mounts the
 * areas under it that are not mounted yet, in the table's order, and is routed again, now to the
 * areas' own routes and middleware. After that it offers each request to the fronts of those
 * areas that have one, and passes on what none takes.
 */
function lazyMount(app: Hono<AppEnv>, areas: LazyArea[]): MiddlewareHandler<AppEnv> {
  let ready = false;
  // Not async: once mounted, most requests pass straight on (a promise less each).
  return (c, next) => {
    if (!ready && !(ready = areas.every((a) => a.mounted()))) {
      return areas.reduce((before, a) => before.then(a.mount), Promise.resolve())
        .then(() => app.fetch(c.req.raw, c.env));
    }
    for (const area of areas) {
      const taken = area.front(c);
      if (taken) return answerTaken(c, taken);
    }
    return next();
  };
}

/** Answers a request an area's front took: counted, timed and logged as every request. */
async function answerTaken(c: Context<AppEnv>, taken: Taken): Promise<Response> {
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
 * Hono's compress, with two things done before it looks at the answer. `Vary: Accept-Encoding` is
 * set in place: compress sets it with `c.header()`, which after `next()` copies the whole answer
 * into a new Response (a tenth of the CPU of a small JSON answer). And a short answer gets its
 * length: compress leaves an answer of a known length under its threshold as it is, but Hono's
 * `c.json` and `c.html` give none, and compress compresses every answer of unknown length, so a
 * JSON answer of a few hundred bytes would go out gzipped and chunked, no smaller, at twice the
 * CPU. Only a request that accepts gzip or deflate is read for its length; the others are not
 * compressed anyway.
 */
function compression(): MiddlewareHandler<AppEnv> {
  const compressing = compress();
  return (c, next) =>
    compressing(c, async () => {
      await next();
      if (!mayCompress(c)) return;
      varyOnEncoding(c);
      // `body` last: its getter turns an answer's bytes into a stream, which Deno then sends as
      // one; an answer this step does not read keeps its bytes.
      if (
        !c.res.headers.has("Content-Length") &&
        ACCEPTS_ENCODING.test(c.req.header("Accept-Encoding") ?? "") && c.res.body !== null
      ) {
        await lengthWhenShort(c);
      }
    });
}

/** Whether compress may compress this answer: its own conditions, in its order. */
function mayCompress(c: Context<AppEnv>): boolean {
  const h = c.res.headers;
  const length = h.get("Content-Length");
  return !(
    c.res.status === 206 || h.has("Content-Encoding") || h.has("Transfer-Encoding") ||
    c.req.method === "HEAD" || (length && Number(length) < COMPRESS_THRESHOLD) ||
    !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(h.get("Content-Type") ?? "") ||
    NO_TRANSFORM.test(h.get("Cache-Control") ?? "")
  );
}

/** Sets Vary on an answer compress may compress, as compress would. */
function varyOnEncoding(c: Context<AppEnv>): void {
  const vary = c.res.headers.get("Vary");
  if (vary === "*" || (vary && VARY_ENCODING.test(vary))) return;
  setHeader(c, "Vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
}

/**
 * Reads an answer of unknown length up to compress's threshold. One that ends before it is
 * answered with its length (so compress leaves it); a longer one goes on as a stream of what was
 * read and the rest. A streamed answer is never read further than the threshold.
 */
async function lengthWhenShort(c: Context<AppEnv>): Promise<void> {
  const res = c.res;
  const reader = res.body!.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  let short = false;
  while (size < COMPRESS_THRESHOLD) {
    const { done, value } = await reader.read();
    if (done) {
      short = true;
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const body = short ? joinBytes(chunks, size) : new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const answer = new Response(body, res);
  if (short) answer.headers.set("Content-Length", String(size));
  // Unset first: Hono's setter would otherwise copy the new answer once more, into a stream.
  c.res = undefined;
  c.res = answer;
}

/** Compress's default: an answer of a known length under this is sent as it is. */
const COMPRESS_THRESHOLD = 1024;
const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/i;
const VARY_ENCODING = /(?:^|,)\s*accept-encoding\s*(?:,|$)/i;
/** An Accept-Encoding that names an encoding compress uses (gzip, deflate) or any (`*`). */
const ACCEPTS_ENCODING = /gzip|deflate|\*/i;

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
  // The route pattern, never the raw path: a path can hold a hook key or a token.
  logRequest(method, route, status, Math.round(seconds * 10_000) / 10);
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
 * the mounted routes of that path (the areas under it were mounted by this request). Null when
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
 * The pattern of the route that answers this request (its last matched handler that is not a
 * middleware), or "unmatched"; known before the handlers run, so in-flight counts are right.
 */
function routePattern(c: Context<AppEnv>): string {
  const matched = c.req.matchedRoutes;
  for (let i = matched.length - 1; i >= 0; i--) {
    if (matched[i].method !== "ALL") {
      const path = matched[i].path;
      return path.includes("{") ? path.replace(CONSTRAINT, "$1") : path;
    }
  }
  return "unmatched";
}

/** A parameter's pattern in a route (`:id{[0-9]{1,15}}`): the metrics and logs say `:id`. */
const CONSTRAINT = /(:\w+)\{.*?\}(?=\/|$)/g;

/**
 * Paths that are not pages: the JSON API, the metrics, and Healthchecks' ping addresses
 * (plain text; the page layer's cross-site check would refuse their POSTs).
 */
const notPage = (path: string) =>
  path === "/api" || path.startsWith("/api/") || path === "/metrics" || path.startsWith("/ping/") ||
  path === "/oai" || path.startsWith("/oai/");

/** Paths answered with HTML pages. */
const isPage = (path: string) => !notPage(path);

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

const areasOf = new WeakMap<
  Hono<AppEnv>,
  { built: AreaName[]; mounts: Map<AreaName, () => Promise<void>> }
>();

/** The areas an app has built so far, in the order it built them. */
export function builtAreas(app: Hono<AppEnv>): AreaName[] {
  return [...areasOf.get(app)?.built ?? []];
}

/** Mounts every area now (what a request under each would do), in the table's order. */
export async function mountEveryArea(app: Hono<AppEnv>): Promise<void> {
  for (const mount of areasOf.get(app)!.mounts.values()) await mount();
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
    import("./http/openapi_doc.ts"),
  ]);
  const config: DocConfig = {
    ...DOC,
    servers: [{ url: deps.config.baseUrl, description: "this service" }],
    errorResponse: (code) => errors(code as 400)[code],
  };
  const api = router();
  for (const name of Object.keys(AREAS) as AreaName[]) {
    const area: Area = AREAS[name];
    if (area.mount !== "/api") continue;
    const make = await area.load().catch((err) => {
      log("error", "route area failed to load", { area: name, error: errorKind(err) });
      throw new ApiError(503, "the API description is not available; try again later", {}, {
        "Retry-After": "5",
      });
    });
    api.route("/", make(deps));
  }
  const root = router();
  root.route("/api", api);
  // Healthchecks' and Uptime Kuma's ping addresses (their own area, compat_pings): described here.
  const { compatDocRoutes } = await import("./api/compat_docs.ts");
  root.route("/", compatDocRoutes(deps));
  return buildDocument(root.defs, config);
}
