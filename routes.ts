import type { Hono } from "hono";
import type { Deps } from "./lib/deps.ts";
import type { AppEnv } from "./http/router.ts";

/**
 * The route table: which area answers which paths, each area imported on the first request to
 * one of its paths. A process answers sooner after start and holds less memory when it
 * evaluates only the areas it serves (an isolate on Deno Deploy often serves one or two; a
 * self-hosted server that never sees an upload never loads the file routes). app.ts mounts an
 * area (Hono's `app.route`) before such a request is routed, so the area's routes, and any
 * middleware it registers, run as in any Hono app. Areas are mounted in this order when one
 * request needs several (GET /me: web_sign_in takes `?verify=` and hands the rest to web_me).
 * tests/app_test.ts checks that `paths` covers every route an area registers.
 */
export interface Area {
  /** Where its routes hang: the API areas under /api, the pages at the root. */
  mount: "/api" | "/";
  /**
   * Hono path patterns of the requests it answers (`/x/*` covers `/x` and all below it), each
   * with a method when the area answers only that one there (`PATCH /api/me`: a GET does not
   * load it; a wrong method loads every area of the path, to answer 405 with their methods).
   */
  paths: readonly string[];
  load(): Promise<(deps: Deps) => Hono<AppEnv>>;
}

export const AREAS = {
  // GET /api/healthz itself is answered by app.ts (api/healthz.ts) without loading this area.
  health: {
    mount: "/api",
    paths: ["/api/audit/verify"],
    load: () => import("./api/health.ts").then((m) => m.healthRoutes),
  },
  sign_in: {
    mount: "/api",
    paths: ["/api/verify", "/api/verify/request"],
    load: () => import("./api/sign_in.ts").then((m) => m.signInRoutes),
  },
  devices: {
    mount: "/api",
    paths: ["/api/me/devices/*", "/api/me/token"],
    load: () => import("./api/devices.ts").then((m) => m.deviceRoutes),
  },
  me: {
    mount: "/api",
    paths: ["/api/me"],
    load: () => import("./api/me.ts").then((m) => m.meRoutes),
  },
  profile: {
    mount: "/api",
    paths: ["PATCH /api/me", "/api/me/avatar", "/api/avatars/*", "/api/profiles/*"],
    load: () => import("./api/profile.ts").then((m) => m.profileRoutes),
  },
  journal: {
    mount: "/api",
    paths: ["/api/me/journal/*"],
    load: () => import("./api/journal.ts").then((m) => m.journalRoutes),
  },
  search: {
    mount: "/api",
    paths: ["/api/search"],
    load: () => import("./api/search.ts").then((m) => m.searchRoutes),
  },
  applications: {
    mount: "/api",
    paths: ["/api/me/apply", "/api/applications/*"],
    load: () => import("./api/applications.ts").then((m) => m.applicationRoutes),
  },
  invites: {
    mount: "/api",
    paths: ["/api/me/invites", "/api/invites"],
    load: () => import("./api/invites.ts").then((m) => m.inviteRoutes),
  },
  actors: {
    mount: "/api",
    paths: ["/api/actors"],
    load: () => import("./api/actors.ts").then((m) => m.actorRoutes),
  },
  export: {
    mount: "/api",
    paths: ["DELETE /api/me", "/api/me/export"],
    load: () => import("./api/export.ts").then((m) => m.exportRoutes),
  },
  catalogue: {
    mount: "/api",
    paths: ["/api/me/modules/*", "/api/modules/*", "/api/points", "/api/catalogue"],
    load: () => import("./api/catalogue.ts").then((m) => m.catalogueRoutes),
  },
  hooks: {
    mount: "/api",
    paths: ["/api/hooks/*"],
    load: () => import("./api/hooks.ts").then((m) => m.hookRoutes),
  },
  status: {
    mount: "/api",
    paths: [
      "/api/me/status-page/*",
      "/api/me/services/:id/badge",
      "/api/status/*",
      "/api/badges/*",
    ],
    load: () => import("./api/status.ts").then((m) => m.statusRoutes),
  },
  channels: {
    mount: "/api",
    paths: ["/api/me/channels/*", "/api/me/alert-settings"],
    load: () => import("./api/channels.ts").then((m) => m.channelRoutes),
  },
  maintenance: {
    mount: "/api",
    paths: ["/api/me/maintenance/*"],
    load: () => import("./api/maintenance.ts").then((m) => m.maintenanceRoutes),
  },
  api_keys: {
    mount: "/api",
    paths: ["/api/me/api-keys/*"],
    load: () => import("./api/api_keys.ts").then((m) => m.apiKeyRoutes),
  },
  hc: {
    mount: "/api",
    paths: [
      "/api/v1/*",
      "/api/v2/*",
      "/api/v3/*",
      "/api/:version/checks/*",
      "/api/:version/channels/*",
      "/api/:version/badges/*",
      "/api/:version/status/*",
    ],
    load: () => import("./api/hc.ts").then((m) => m.hcRoutes),
  },
  services: {
    mount: "/api",
    paths: ["/api/me/services/*", "/api/services"],
    load: () => import("./api/services.ts").then((m) => m.servicesRoutes),
  },
  ping_keys: {
    mount: "/api",
    paths: ["/api/me/ping-key", "POST /api/me/services/:id/push"],
    load: () => import("./api/ping_keys.ts").then((m) => m.pingKeyRoutes),
  },
  imports: {
    mount: "/api",
    paths: ["/api/me/import"],
    load: () => import("./api/imports.ts").then((m) => m.importRoutes),
  },
  files: {
    mount: "/api",
    paths: ["/api/me/files/*", "/api/files/*"],
    load: () => import("./api/files.ts").then((m) => m.filesRoutes),
  },
  requests: {
    mount: "/api",
    paths: ["/api/requests/*"],
    load: () => import("./api/requests.ts").then((m) => m.requestRoutes),
  },
  contributions: {
    mount: "/api",
    paths: ["/api/contributions/*"],
    load: () => import("./api/contributions.ts").then((m) => m.contributionRoutes),
  },
  // The web pages (web/): routes only, under the middleware of web/_web.tsx.
  web_static: {
    mount: "/",
    paths: ["/static/*"],
    load: () => import("./web/_web.tsx").then((m) => m.staticRoutes),
  },
  web_home: {
    mount: "/",
    paths: ["/"],
    load: () => import("./web/home.tsx").then((m) => m.homePages),
  },
  web_sign_in: {
    mount: "/",
    paths: ["/sign-in/*", "/me", "/me/verify", "/sign-out"],
    load: () => import("./web/sign_in.tsx").then((m) => m.signInPages),
  },
  web_sign_in_providers: {
    mount: "/",
    paths: ["/sign-in/with/*", "/sign-in/callback/*", "/me/sign-in-methods/add/*"],
    load: () => import("./web/sign_in_providers.tsx").then((m) => m.providerPages),
  },
  web_passkeys: {
    mount: "/",
    paths: ["/sign-in/passkey/*"],
    load: () => import("./web/passkeys.tsx").then((m) => m.passkeySignInPages),
  },
  web_me_sign_in_methods: {
    mount: "/",
    paths: ["/me/sign-in-methods/*", "/me/passkeys/*"],
    load: () => import("./web/me_sign_in_methods.tsx").then((m) => m.signInMethodPages),
  },
  web_modules: {
    mount: "/",
    paths: ["/catalogue", "/modules/*"],
    load: () => import("./web/modules.tsx").then((m) => m.modulePages),
  },
  web_status: {
    mount: "/",
    paths: ["/status/*"],
    load: () => import("./web/status.tsx").then((m) => m.statusPages),
  },
  web_public: {
    mount: "/",
    paths: ["/people/*", "/search", "/contribute/status", "/robots.txt", "/sitemap.xml"],
    load: () => import("./web/public.tsx").then((m) => m.publicPages),
  },
  web_forms: {
    mount: "/",
    paths: ["/request/*", "/contribute", "/contribute/sent"],
    load: () => import("./web/forms.tsx").then((m) => m.formPages),
  },
  web_api_reference: {
    mount: "/",
    paths: ["/api-reference"],
    load: () => import("./web/api_reference.tsx").then((m) => m.apiReferencePages),
  },
  web_me: {
    mount: "/",
    paths: ["/me"],
    load: () => import("./web/me.tsx").then((m) => m.mePages),
  },
  web_me_profile: {
    mount: "/",
    paths: ["/me/profile", "/me/avatar/*"],
    load: () => import("./web/me_profile.tsx").then((m) => m.profilePages),
  },
  web_me_journal: {
    mount: "/",
    paths: ["/me/journal/*"],
    load: () => import("./web/me_journal.tsx").then((m) => m.journalPages),
  },
  web_me_devices: {
    mount: "/",
    paths: ["/me/devices/*"],
    load: () => import("./web/me_devices.tsx").then((m) => m.devicePages),
  },
  web_compat: {
    mount: "/",
    paths: [
      "/me/ping-key",
      "/me/services/import",
      "/me/services/import/*",
      "POST /me/services/:id/methods",
      "/me/services/:id/push",
    ],
    load: () => import("./web/me_compat.tsx").then((m) => m.compatPages),
  },
  web_me_services: {
    mount: "/",
    paths: ["/me/services/*"],
    load: () => import("./web/me_services.tsx").then((m) => m.servicePages),
  },
  web_maintenance: {
    mount: "/",
    paths: ["/me/maintenance/*"],
    load: () => import("./web/me_maintenance.tsx").then((m) => m.maintenancePages),
  },
  web_watch_board: {
    mount: "/",
    paths: ["/watch", "/watch/*"],
    load: () => import("./web/watch.tsx").then((m) => m.watchBoardPages),
  },
  web_watch: {
    mount: "/",
    paths: ["/me/services/:id/*", "/me/channels/*", "/me/status-page/*"],
    load: () => import("./web/me_watch.tsx").then((m) => m.watchPages),
  },
  web_api_keys: {
    mount: "/",
    paths: ["/me/api-keys/*"],
    load: () => import("./web/me_api_keys.tsx").then((m) => m.apiKeyPages),
  },
  web_me_files: {
    mount: "/",
    paths: ["/me/files/*"],
    load: () => import("./web/me_files.tsx").then((m) => m.filePages),
  },
  web_me_data: {
    mount: "/",
    paths: ["/me/data/*", "/erased"],
    load: () => import("./web/me_data.tsx").then((m) => m.dataPages),
  },
  web_me_standing: {
    mount: "/",
    paths: ["/me/standing/*"],
    load: () => import("./web/me_standing.tsx").then((m) => m.standingPages),
  },
  web_me_work: {
    mount: "/",
    paths: ["/me/work/*"],
    load: () => import("./web/me_work.tsx").then((m) => m.workPages),
  },
  web_team: {
    mount: "/",
    paths: ["/team/*"],
    load: () => import("./web/team.tsx").then((m) => m.teamPages),
  },
} as const satisfies Record<string, Area>;

export type AreaName = keyof typeof AREAS;
