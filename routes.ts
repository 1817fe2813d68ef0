import type { Hono } from "hono";
import type { Deps } from "./lib/deps.ts";
import type { AppEnv } from "./http/router.ts";

/**
 * The service's route areas, each imported on the first request that needs it. A process
 * answers sooner after start and holds less memory when it evaluates only the areas it serves
 * (an isolate on Deno Deploy often serves one or two; a self-hosted server that never sees an
 * upload never loads the file routes). routes_manifest.ts says which area answers which
 * method and path; `deno task routes` writes it from this list, in this order, which is the
 * order routes are matched in.
 */
export interface Area {
  /** Where its routes hang: the API areas under /api, the landing pages at the root. */
  mount: "/api" | "/";
  load(): Promise<(deps: Deps) => Hono<AppEnv>>;
}

export const AREAS = {
  // GET /api/healthz itself is answered by app.ts (api/healthz.ts) without loading this area.
  health: { mount: "/api", load: () => import("./api/health.ts").then((m) => m.healthRoutes) },
  sign_in: { mount: "/api", load: () => import("./api/sign_in.ts").then((m) => m.signInRoutes) },
  devices: { mount: "/api", load: () => import("./api/devices.ts").then((m) => m.deviceRoutes) },
  me: { mount: "/api", load: () => import("./api/me.ts").then((m) => m.meRoutes) },
  profile: { mount: "/api", load: () => import("./api/profile.ts").then((m) => m.profileRoutes) },
  journal: { mount: "/api", load: () => import("./api/journal.ts").then((m) => m.journalRoutes) },
  search: { mount: "/api", load: () => import("./api/search.ts").then((m) => m.searchRoutes) },
  applications: {
    mount: "/api",
    load: () => import("./api/applications.ts").then((m) => m.applicationRoutes),
  },
  invites: { mount: "/api", load: () => import("./api/invites.ts").then((m) => m.inviteRoutes) },
  actors: { mount: "/api", load: () => import("./api/actors.ts").then((m) => m.actorRoutes) },
  export: { mount: "/api", load: () => import("./api/export.ts").then((m) => m.exportRoutes) },
  catalogue: {
    mount: "/api",
    load: () => import("./api/catalogue.ts").then((m) => m.catalogueRoutes),
  },
  hooks: { mount: "/api", load: () => import("./api/hooks.ts").then((m) => m.hookRoutes) },
  status: {
    mount: "/api",
    load: () => import("./api/status.ts").then((m) => m.statusRoutes),
  },
  channels: {
    mount: "/api",
    load: () => import("./api/channels.ts").then((m) => m.channelRoutes),
  },
  services: {
    mount: "/api",
    load: () => import("./api/services.ts").then((m) => m.servicesRoutes),
  },
  files: { mount: "/api", load: () => import("./api/files.ts").then((m) => m.filesRoutes) },
  requests: { mount: "/api", load: () => import("./api/requests.ts").then((m) => m.requestRoutes) },
  contributions: {
    mount: "/api",
    load: () => import("./api/contributions.ts").then((m) => m.contributionRoutes),
  },
  // The web pages (web/): routes only, under the middleware of web/_web.tsx.
  web_static: {
    mount: "/",
    load: () => import("./web/_web.tsx").then((m) => m.staticRoutes),
  },
  web_home: { mount: "/", load: () => import("./web/home.tsx").then((m) => m.homePages) },
  web_sign_in: {
    mount: "/",
    load: () => import("./web/sign_in.tsx").then((m) => m.signInPages),
  },
  web_modules: {
    mount: "/",
    load: () => import("./web/modules.tsx").then((m) => m.modulePages),
  },
  web_status: {
    mount: "/",
    load: () => import("./web/status.tsx").then((m) => m.statusPages),
  },
  web_public: {
    mount: "/",
    load: () => import("./web/public.tsx").then((m) => m.publicPages),
  },
  web_forms: {
    mount: "/",
    load: () => import("./web/forms.tsx").then((m) => m.formPages),
  },
  web_api_reference: {
    mount: "/",
    load: () => import("./web/api_reference.tsx").then((m) => m.apiReferencePages),
  },
  web_me: { mount: "/", load: () => import("./web/me.tsx").then((m) => m.mePages) },
  web_me_profile: {
    mount: "/",
    load: () => import("./web/me_profile.tsx").then((m) => m.profilePages),
  },
  web_me_journal: {
    mount: "/",
    load: () => import("./web/me_journal.tsx").then((m) => m.journalPages),
  },
  web_me_devices: {
    mount: "/",
    load: () => import("./web/me_devices.tsx").then((m) => m.devicePages),
  },
  web_me_services: {
    mount: "/",
    load: () => import("./web/me_services.tsx").then((m) => m.servicePages),
  },
  web_watch: {
    mount: "/",
    load: () => import("./web/me_watch.tsx").then((m) => m.watchPages),
  },
  web_me_files: {
    mount: "/",
    load: () => import("./web/me_files.tsx").then((m) => m.filePages),
  },
  web_me_data: { mount: "/", load: () => import("./web/me_data.tsx").then((m) => m.dataPages) },
  web_me_standing: {
    mount: "/",
    load: () => import("./web/me_standing.tsx").then((m) => m.standingPages),
  },
  web_me_work: { mount: "/", load: () => import("./web/me_work.tsx").then((m) => m.workPages) },
  web_team: { mount: "/", load: () => import("./web/team.tsx").then((m) => m.teamPages) },
} as const satisfies Record<string, Area>;

export type AreaName = keyof typeof AREAS;

/** One route of the manifest: the area that answers it, its method and its Hono path. */
export type ManifestRoute = readonly [AreaName, string, string];

/** The routes an area registers, in order, each method and path once. */
export function routesOf(area: AreaName, app: Hono<AppEnv>): ManifestRoute[] {
  const seen = new Set<string>();
  const out: ManifestRoute[] = [];
  for (const r of app.routes) {
    const id = `${r.method} ${r.path}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push([area, r.method, r.path]);
  }
  return out;
}
