import { z } from "zod";
import { getService, rotateBadge } from "../kv/services.ts";
import {
  badgeOf,
  getStatusPage,
  MAX_NOTE,
  publicStatusPage,
  saveStatusPage,
} from "../kv/status_page.ts";
import type { Deps } from "../lib/deps.ts";
import { badge } from "../lib/svg.ts";
import { bearer, body, createRoute, errors, idParam, json, router } from "../http/router.ts";
import { fail } from "../http/errors.ts";
import { requireToken } from "../http/guards.ts";
import { multiLine, oneLine } from "../http/text.ts";

const State = z.enum(["ok", "warn", "off", "wait"]);
const PageSettings = z.object({
  enabled: z.boolean(),
  title: oneLine(80).default(""),
  services: z.array(z.object({
    id: z.number().int().positive(),
    note: multiLine(MAX_NOTE).default("").meta({
      description: "An incident or maintenance text shown with the service",
    }),
  })).max(30).default([]),
}).meta({ id: "StatusPageSettings" });

const PublicPageSchema = z.object({
  title: z.string(),
  owner: z.string(),
  services: z.array(z.object({
    name: z.string(),
    state: State,
    uptime: z.number().nullable(),
    days: z.array(z.object({ date: z.string(), uptime: z.number().nullable() })),
    note: z.string(),
  })),
}).meta({ id: "StatusPage" });

/** Status pages (/status/<slug>) and service badges; see kv/status_page.ts. */
export function statusRoutes(deps: Deps) {
  const app = router();
  const auth = [requireToken(deps)];

  const settings = async (account: number, slug: string) => {
    const p = await getStatusPage(deps.kv, account);
    return {
      enabled: p?.enabled ?? false,
      title: p?.title ?? "",
      services: p?.services ?? [],
      path: `/status/${slug}`,
    };
  };
  const SettingsAnswer = PageSettings.extend({
    path: z.string().meta({ description: "Where the page is (while enabled)" }),
  });

  app.openapi(
    createRoute({
      method: "get",
      path: "/me/status-page",
      tags: ["services"],
      summary: "The settings of the caller's public status page",
      security: bearer,
      middleware: auth,
      responses: { 200: json(SettingsAnswer), ...errors(401) },
    }),
    async (c) => {
      const me = c.get("account");
      return c.json(await settings(me.id, me.slug), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/me/status-page",
      tags: ["services"],
      summary: "Publish (or withdraw) the status page and choose its services and notes",
      security: bearer,
      middleware: auth,
      request: body(PageSettings),
      responses: { 200: json(SettingsAnswer), ...errors(400, 401) },
    }),
    async (c) => {
      const me = c.get("account");
      if (!me.slug) fail(400, "name your account first: the page's address is made from it");
      await saveStatusPage(deps, me.id, c.req.valid("json"));
      return c.json(await settings(me.id, me.slug), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/status/{slug}",
      tags: ["public"],
      summary: "An account's public status page: chosen services, state, 90 days, notes",
      request: { params: z.object({ slug: z.string().max(100) }) },
      responses: { 200: json(PublicPageSchema), ...errors(404) },
    }),
    async (c) => {
      const page = await publicStatusPage(deps, c.req.valid("param").slug);
      if (!page) fail(404, "no such status page");
      c.header("Cache-Control", "public, max-age=60");
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/me/services/{id}/badge",
      tags: ["services"],
      summary: "Make (or replace) the service's public SVG badge address",
      security: bearer,
      middleware: auth,
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: json(z.object({ ok: z.literal(true), badge_url: z.string() })),
        ...errors(401, 404),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      if (!(await getService(deps.kv, me.id, id)).value) fail(404, "no such service");
      const token = await rotateBadge(deps, me.id, id);
      if (!token) fail(404, "no such service");
      return c.json(
        { ok: true as const, badge_url: `${deps.config.baseUrl}/api/badges/${token}.svg` },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/badges/{file}",
      tags: ["public"],
      summary: "A service's SVG badge: its name and state (up, late, down, new)",
      request: { params: z.object({ file: z.string().max(40).meta({ example: "…22….svg" }) }) },
      responses: {
        200: { description: "SVG", content: { "image/svg+xml": { schema: z.string() } } },
        ...errors(404),
      },
    }),
    async (c) => {
      const file = c.req.valid("param").file;
      const found = file.endsWith(".svg") ? await badgeOf(deps, file.slice(0, -4)) : null;
      if (!found) fail(404, "no such badge");
      c.header("Content-Type", "image/svg+xml; charset=utf-8");
      c.header("Cache-Control", "no-cache, max-age=0");
      c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
      return c.body(badge(found.name, found.state), 200);
    },
  );

  return app;
}
