/**
 * The route areas and their lazy mounting. Each area (a file of api/ or web/) declares its own
 * routes; this table says only where it hangs and the prefixes it answers under, so that a
 * process imports, builds and mounts (Hono's `app.route`) an area on the first request under one
 * of them: it evaluates only the areas it serves (importing every area at start would cost every
 * process its start-up time and idle memory goals: docs/performance.md, "Start-up and the request
 * path"). A prefix may name the one method the area answers there ("PATCH /api/me"): the
 * other methods' requests to that path do not mount it (GET /api/me, a signed-in client's
 * first request, builds the area that answers it and not those that change or erase the
 * account). Two areas under one prefix are mounted in this order (GET /me: web/sign_in.tsx
 * takes `?verify=` and hands the rest on to web/me.tsx).
 * tests/app_test.ts checks that every route of an area lies under one of its prefixes.
 */
import type { Hono, MiddlewareHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import type { Deps } from "./lib/deps.ts";
import { errorKind, log } from "./lib/log.ts";
import { ApiError } from "./http/errors.ts";
import type { AppEnv } from "./http/router.ts";

interface Area {
  /** Where its routes hang: the API areas under /api (the document lists them there), else /. */
  mount: "/api" | "/";
  /**
   * The prefixes it answers under (`/x/*` is `/x` and everything below it), each for every
   * method or, written `METHOD /x`, for that method only.
   */
  prefixes: readonly string[];
  /** Whether it answers with pages (the page layer's middleware and error pages). */
  pages: boolean;
  /**
   * Its routes go ahead of the app's own middleware (the pings: the heartbeat's hot path, whose
   * CPU a ping is measured against a floor by bench/heartbeat.ts); they count and time their
   * requests themselves (http/measured.ts), and are compressed by nothing.
   */
  first?: true;
  load(): Promise<(deps: Deps) => Hono<AppEnv>>;
}

/** The areas, in mounting order. */
export const ROUTE_AREAS = {
  // GET /api/healthz itself is answered by the app (api/healthz.ts) without loading this area.
  health: api(["/api/audit/*"], () => import("./api/health.ts").then((m) => m.healthRoutes)),
  sign_in: api(["/api/verify/*"], () => import("./api/sign_in.ts").then((m) => m.signInRoutes)),
  devices: api(
    ["/api/me/devices/*", "/api/me/token"],
    () => import("./api/devices.ts").then((m) => m.deviceRoutes),
  ),
  me: api(["/api/me"], () => import("./api/me.ts").then((m) => m.meRoutes)),
  profile: api(
    ["PATCH /api/me", "/api/me/avatar", "/api/avatars/*", "/api/profiles/*"],
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
    ["DELETE /api/me", "/api/me/export"],
    () => import("./api/export.ts").then((m) => m.exportRoutes),
  ),
  catalogue: api(
    ["/api/me/modules/*", "/api/modules/*", "/api/points", "/api/catalogue"],
    () => import("./api/catalogue.ts").then((m) => m.catalogueRoutes),
  ),
  hooks: {
    ...api(["/api/hooks/*"], () => import("./api/hooks.ts").then((m) => m.hookRoutes)),
    first: true,
  },
  // Healthchecks' and Uptime Kuma's ping addresses, answered as those products answer them.
  compat_pings: {
    ...other(
      ["/ping/*", "/api/push/*"],
      () => import("./api/compat_pings.ts").then((m) => m.compatPingRoutes),
    ),
    first: true,
  },
  status: api(
    [
      "/api/me/status-page/*",
      "/api/me/status-pages/*",
      "/api/me/services/*",
      "/api/status/*",
      "/api/badges/*",
    ],
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
  oai: other(["/oai/*"], () => import("./api/oai.ts").then((m) => m.oaiRoutes)),
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
  web_me_service: page(
    ["/me/services/*"],
    () => import("./web/me_service.tsx").then((m) => m.serviceOnePages),
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
    ["/me/services/*", "/me/channels/*"],
    () => import("./web/me_watch.tsx").then((m) => m.watchPages),
  ),
  web_status_pages: page(
    ["/me/status-page/*", "/me/status-pages/*"],
    () => import("./web/me_status_pages.tsx").then((m) => m.statusSettingsPages),
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

export type AreaName = keyof typeof ROUTE_AREAS;

/** A JSON area of the API, under /api. */
function api(prefixes: string[], load: Area["load"]): Area {
  return { mount: "/api", prefixes, pages: false, load };
}

/** A page area (web/). */
function page(prefixes: string[], load: Area["load"]): Area {
  return { mount: "/", prefixes, pages: true, load };
}

/** Another product's or protocol's addresses (plain text, XML, their JSON): no pages. */
function other(prefixes: string[], load: Area["load"]): Area {
  return { mount: "/", prefixes, pages: false, load };
}

/**
 * Whether a path is answered with pages: anything outside /api, /metrics and the addresses of
 * the areas that are no pages. The one place that tells (its 404s and errors included).
 */
export function isPage(path: string): boolean {
  return !NOT_PAGES.test(path);
}

/** The first segment of every path that is not a page: /api, /metrics, and the `other` areas. */
const NOT_PAGES = new RegExp(
  `^/(${
    [
      "api",
      "metrics",
      ...Object.values(ROUTE_AREAS as Record<string, Area>)
        .filter((a) => !a.pages && a.mount === "/")
        .flatMap((a) => a.prefixes.map((p) => prefixRoute(p)[1].split("/")[1])),
    ]
      .join("|")
  })(/|$)`,
);

/** A prefix of `Area.prefixes` as a route of the areas' table: its method (or ALL) and path. */
export function prefixRoute(prefix: string): [method: string, path: string] {
  const space = prefix.indexOf(" ");
  return space < 0 ? ["ALL", prefix] : [prefix.slice(0, space), prefix.slice(space + 1)];
}

/** What an app knows of its areas: those it has mounted, and how to mount one. */
interface Mounts {
  built: AreaName[];
  mount: Map<AreaName, () => Promise<void>>;
  /**
   * The areas over each path, whatever the method: what a 405 mounts to say the methods. Made
   * by the first request no route answers, not at start.
   */
  anyMethod: TrieRouter<AreaName> | null;
}

const mountsOf = new WeakMap<Hono<AppEnv>, Mounts>();

/**
 * The app's first middleware: a request under a prefix whose areas are not all mounted yet
 * mounts them, in the table's order, and is routed again, now to their routes. A failed import
 * answers 503 and is forgotten, so the next request tries again.
 */
export function lazyAreas(app: Hono<AppEnv>, deps: Deps): MiddlewareHandler<AppEnv> {
  const table = new TrieRouter<AreaName>();
  const mounts: Mounts = { built: [], mount: new Map(), anyMethod: null };
  const mounted = new Set<AreaName>();
  mountsOf.set(app, mounts);
  for (const name of Object.keys(ROUTE_AREAS) as AreaName[]) {
    const area: Area = ROUTE_AREAS[name];
    for (const prefix of area.prefixes) {
      const [method, path] = prefixRoute(prefix);
      table.add(method, path, name);
    }
    let loading: Promise<void> | null = null;
    mounts.mount.set(name, () =>
      loading ??= area.load().then((make) => {
        const before = app.routes.length;
        app.route(area.mount, make(deps));
        if (area.first) putFirst(app, before);
        mounted.add(name);
        mounts.built.push(name);
      }, (err) => {
        loading = null;
        log("error", "route area failed to load", { area: name, error: errorKind(err) });
        throw new ApiError(503, "this part of the service is not available; try again later", {}, {
          "Retry-After": "5",
        });
      }));
  }
  // The method and paths whose areas are all mounted: an area once mounted stays, so an entry
  // never turns false, and such a request skips the table's match.
  const settled = new Set<string>();
  // Not async: a request whose areas are mounted passes straight on (a promise less each).
  return (c, next) => {
    // HEAD is answered by GET routes (Hono's own rule), so it mounts what GET mounts.
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const asked = `${method} ${c.req.path}`;
    if (settled.has(asked)) return next();
    let names: AreaName[] | null = null;
    for (const [name] of table.match(method, c.req.path)[0]) {
      if (!mounted.has(name)) (names ??= []).push(name);
    }
    if (!names) {
      if (settled.size >= SETTLED_MAX) settled.clear();
      settled.add(asked);
      return next();
    }
    return mountAll(mounts, names).then(() => app.fetch(c.req.raw, c.env));
  };
}

/** Settled paths remembered at most, then forgotten together (a path holds ids: they are many). */
const SETTLED_MAX = 1000;

/** Mounts the named areas one after the other, in the order given. */
function mountAll(mounts: Mounts, names: AreaName[]): Promise<void> {
  return names.reduce((before, name) => before.then(mounts.mount.get(name)!), Promise.resolve());
}

/**
 * Mounts every area with a prefix over `path`, whatever its method, in the table's order: a
 * request that no route answers then learns every method the path has (the 405's Allow).
 */
export function mountAreasOver(app: Hono<AppEnv>, path: string): Promise<void> {
  const mounts = mountsOf.get(app)!;
  if (!mounts.anyMethod) {
    mounts.anyMethod = new TrieRouter();
    for (const name of Object.keys(ROUTE_AREAS) as AreaName[]) {
      const area: Area = ROUTE_AREAS[name];
      for (const prefix of area.prefixes) mounts.anyMethod.add("ALL", prefixRoute(prefix)[1], name);
    }
  }
  return mountAll(mounts, mounts.anyMethod.match("ALL", path)[0].map(([name]) => name));
}

/**
 * Puts the routes added since `from` first, ahead of the lazy mounts and the app's middleware
 * (a ping whose area is mounted meets no other handler): the router is made anew in that
 * order, once for the area.
 */
function putFirst(app: Hono<AppEnv>, from: number): void {
  const routes = [...app.routes.slice(from), ...app.routes.slice(0, from)];
  const router = new TrieRouter<[MiddlewareHandler<AppEnv>, (typeof routes)[number]]>();
  for (const r of routes) router.add(r.method, r.path, [r.handler as MiddlewareHandler<AppEnv>, r]);
  app.routes = routes;
  app.router = router as unknown as typeof app.router;
}

/** The areas an app has mounted so far, in the order it mounted them. */
export function builtAreas(app: Hono<AppEnv>): AreaName[] {
  return [...mountsOf.get(app)?.built ?? []];
}

/** Mounts every area now (what a request under each would do), in the table's order. */
export function mountEveryArea(app: Hono<AppEnv>): Promise<void> {
  const mounts = mountsOf.get(app)!;
  return mountAll(mounts, [...mounts.mount.keys()]);
}
