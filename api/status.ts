import { z } from "zod";
import { getService, rotateBadge } from "../kv/service/commands.ts";
import {
  badgeOf,
  changeStatusPage,
  createStatusPage,
  deleteStatusPage,
  getStatusPage,
  listStatusPages,
  MAX_PAGES,
  pageSlug,
  publicStatusPage,
  saveStatusPage,
  type StatusPage,
} from "../kv/status/page.ts";
import type { Deps } from "../lib/deps.ts";
import { badge } from "../lib/svg.ts";
import { BADGE_FORMATS, projectBadgeState } from "../kv/service/hc_checks.ts";
import {
  body,
  createRoute,
  type Ctx,
  errors,
  idParam,
  jsonResponse,
  router,
} from "../http/router.ts";
import { fail } from "../http/errors.ts";
import { clientOrigin, guarded, limit } from "../http/guards.ts";
import { confirmFollow, followerCount } from "../kv/status/followers.ts";
import { requestFollow, unfollow } from "../kv/status/follows.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { deleteNote, listNotes, NOTE_KINDS, noteView, postNote } from "../kv/status/notes.ts";
import { FollowBody, FollowToken, NoteBody } from "../http/services_inputs.ts";
import { NewPageSettings, PageSettings } from "../http/status_inputs.ts";
import type { Account } from "../kv/accounts/accounts.ts";
import { IncidentSchema } from "./incidents.ts";

const State = z.enum(["ok", "warn", "off", "wait"]);
const NoteSchema = z.object({
  id: z.number(),
  kind: z.enum(NOTE_KINDS),
  text: z.string(),
  at: z.string().meta({ description: "When it was posted (ISO 8601)" }),
}).meta({ id: "StatusNote" });
const PublicPageSchema = z.object({
  title: z.string(),
  link: z.string().nullable().meta({ description: "The owner's own site, or null" }),
  logo: z.string().nullable().meta({ description: "Path of the page's logo, or null" }),
  owner: z.string(),
  services: z.array(z.object({
    name: z.string(),
    group: z.string().meta({ description: "The service's group, as the page groups them" }),
    state: State,
    maintenance: z.boolean().meta({
      description: "A maintenance window covers it now: its failures alert nobody",
    }),
    paused: z.boolean().meta({
      description: "A heartbeat its owner paused: state wait, no alerts",
    }),
    unreachable_via: z.array(z.string()).meta({
      description: "Off while these services it depends on are off: it reads unreachable " +
        "(their names), not down; empty otherwise",
    }),
    uptime: z.number().nullable(),
    days: z.array(z.object({
      date: z.string(),
      uptime: z.number().nullable(),
      down_s: z.number().int().meta({ description: "Seconds down (off) that day" }),
      maintenance_s: z.number().int().meta({
        description: "Seconds in maintenance that day (left out of uptime)",
      }),
    })),
    note: z.string(),
  })),
  notes: z.array(NoteSchema).meta({
    description: "Incident notes of the last 90 days, newest first",
  }),
  incidents: z.array(
    IncidentSchema.omit({ services: true }).extend({
      affected: z.array(z.string()).meta({
        description: "The names of the page's services it affects (none: the whole page)",
      }),
      explained: z.string().nullable().meta({
        description: "What explains its outages (a maintenance window, a service depended " +
          "on being down); null: nothing",
      }),
    }).meta({ id: "PublicIncident" }),
  ).meta({
    description: "The incidents of the last year shown on the page, newest first; open ones " +
      "have resolved null. Also as Atom at /status/<slug>/incidents.atom",
  }),
}).meta({ id: "StatusPage" });
const Slug = z.object({ slug: z.string().max(100) });
const Ok = z.object({ ok: z.literal(true) });
const PageRef = z.object({
  ok: z.literal(true),
  path: z.string().meta({ description: "The status page followed" }),
});

/** Status pages (/status/<slug>) and service badges; see kv/status/page.ts. */
const SettingsAnswer = PageSettings.extend({
  path: z.string().meta({ description: "Where the page is (while enabled)" }),
  followers: z.number().int().meta({
    description: "How many follow the page by mail (confirmed); never who",
  }),
});
const PageItem = NewPageSettings.extend({
  id: z.number().int().meta({ description: "1: the account's first page (/api/me/status-page)" }),
  slug: z.string().meta({ description: "Its address: /status/<slug> (the account's for page 1)" }),
  path: z.string().meta({ description: "Where the page is (while enabled)" }),
  followers: z.number().int().meta({
    description: "How many follow the page by mail (confirmed); never who",
  }),
}).meta({ id: "StatusPageItem" });
const PageId = z.object({ id: idParam });

const links = [
  ["confirm", "Confirm a follow with the token of the mailed link", confirmFollow],
  [
    "unfollow",
    "Stop following, with the token of a mail's unfollow link: the address is deleted",
    unfollow,
  ],
] as const;

export function statusRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  /** A page's settings as the API answers them, with its address and followers. */
  const itemOf = async (owner: Pick<Account, "id" | "slug">, p: StatusPage) => ({
    id: p.id,
    slug: pageSlug(p, owner),
    enabled: p.enabled,
    title: p.title,
    services: p.services.map((s) => ({ id: s.id, note: s.note, group: s.group ?? "" })),
    link: p.link ?? "",
    logo: p.logo ?? false,
    path: `/status/${pageSlug(p, owner)}`,
    followers: await followerCount(deps.kv, owner.id, p.id),
  });
  const settings = async (owner: Pick<Account, "id" | "slug">) => {
    const p = await getStatusPage(deps.kv, owner.id);
    const { id: _id, slug: _slug, ...item } = await itemOf(
      owner,
      p ?? { id: 1, slug: "", enabled: false, title: "", services: [] },
    );
    return item;
  };
  app.openapi(
    bearer({
      method: "get",
      path: "/me/status-page",
      tags: ["services"],
      summary: "The settings of the caller's first status page (at the account's address)",
      responses: { 200: jsonResponse(SettingsAnswer), ...errors(401) },
    }),
    async (c) => c.json(await settings(c.get("account")), 200),
  );

  app.openapi(
    bearer({
      method: "put",
      path: "/me/status-page",
      tags: ["services"],
      summary: "Publish (or withdraw) the first status page and choose its services and notes",
      request: body(PageSettings),
      responses: { 200: jsonResponse(SettingsAnswer), ...errors(400, 401) },
    }),
    async (c) => {
      const me = c.get("account");
      if (!me.slug) fail(400, "name your account first: the page's address is made from it");
      await saveStatusPage(deps, me.id, { ...c.req.valid("json"), id: 1, slug: "" });
      return c.json(await settings(me), 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/status-pages",
      tags: ["services"],
      summary: "The caller's status pages, the first one first",
      responses: { 200: jsonResponse(z.object({ items: z.array(PageItem) })), ...errors(401) },
    }),
    async (c) => {
      const me = c.get("account");
      const pages = await listStatusPages(deps.kv, me.id);
      return c.json({ items: await Promise.all(pages.map((p) => itemOf(me, p))) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/status-pages",
      tags: ["services"],
      summary: "Make another status page, at an address of its own",
      description: `At most ${MAX_PAGES} pages an account. A slug taken by another page or ` +
        "an account answers 400 naming `slug`.",
      request: body(NewPageSettings),
      responses: { 201: jsonResponse(z.object({ item: PageItem })), ...errors(400, 401) },
    }),
    async (c) => {
      const me = c.get("account");
      const page = await createStatusPage(deps, me.id, c.req.valid("json"));
      return c.json({ item: await itemOf(me, page) }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/status-pages/{id}",
      tags: ["services"],
      summary: "One of the caller's status pages",
      request: { params: PageId },
      responses: { 200: jsonResponse(z.object({ item: PageItem })), ...errors(401, 404) },
    }),
    async (c) => {
      const me = c.get("account");
      const page = await getStatusPage(deps.kv, me.id, c.req.valid("param").id);
      if (!page) fail(404, "no such status page");
      return c.json({ item: await itemOf(me, page) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "put",
      path: "/me/status-pages/{id}",
      tags: ["services"],
      summary: "Change a status page: its address, publishing, title, services and groups",
      description: "Page 1 lives at the account's address: give it no slug (or its own).",
      request: { params: PageId, ...body(NewPageSettings.partial({ slug: true })) },
      responses: { 200: jsonResponse(z.object({ item: PageItem })), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const me = c.get("account");
      const { id } = c.req.valid("param");
      const input = c.req.valid("json");
      const old = await getStatusPage(deps.kv, me.id, id);
      if (!old) fail(404, "no such status page");
      const slug = id === 1 && input.slug === me.slug ? "" : input.slug ?? old.slug;
      const page = await changeStatusPage(deps, me.id, { ...input, id, slug });
      return c.json({ item: await itemOf(me, page) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/status-pages/{id}",
      tags: ["services"],
      summary: "Delete a status page with its followers (the incidents stay)",
      request: { params: PageId },
      responses: { 200: jsonResponse(Ok), ...errors(401, 404) },
    }),
    async (c) => {
      await deleteStatusPage(deps, c.get("account").id, c.req.valid("param").id);
      return c.json({ ok: true as const }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/status/{slug}",
      tags: ["public"],
      summary: "A public status page: chosen services, state, 90 days, incidents, notes",
      request: { params: Slug },
      responses: { 200: jsonResponse(PublicPageSchema), ...errors(404) },
    }),
    async (c) => {
      const page = await publicStatusPage(deps, c.req.valid("param").slug);
      if (!page) fail(404, "no such status page");
      c.header("Cache-Control", "public, max-age=60");
      const { version: _live, cards: _cards, ...shown } = page;
      return c.json(shown, 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/status-page/notes",
      tags: ["services"],
      summary: "The incident notes of the caller's status page (90 days, newest first)",
      responses: { 200: jsonResponse(z.object({ items: z.array(NoteSchema) })), ...errors(401) },
    }),
    async (c) => {
      const notes = await listNotes(deps.kv, c.get("account").id, deps.clock.now());
      return c.json({ items: notes.map(noteView) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/status-page/notes",
      tags: ["services"],
      summary: "Post an incident note on the status page; it is mailed to the followers",
      request: body(NoteBody),
      responses: { 201: jsonResponse(z.object({ item: NoteSchema })), ...errors(400, 401, 429) },
    }),
    async (c) => {
      const note = await postNote(deps, c.get("account").id, c.req.valid("json"));
      return c.json({ item: noteView(note) }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/status-page/notes/{id}",
      tags: ["services"],
      summary: "Delete an incident note",
      request: { params: z.object({ id: idParam }) },
      responses: { 200: jsonResponse(Ok), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await deleteNote(deps.kv, c.get("account").id, id)) fail(404, "no such note");
      return c.json({ ok: true as const }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/status/{slug}/follow",
      tags: ["public"],
      summary: "Follow a status page by mail: mails a confirmation link to the address",
      description: "The same answer whether or not the address follows already. At most " +
        `${RULES.followByAddress.max} an hour per address and ${RULES.followByOrigin.max} ` +
        "per client address.",
      request: { params: Slug, ...body(FollowBody) },
      responses: {
        202: jsonResponse(z.object({ ok: z.literal(true), sent: z.literal(true) }), "Link mailed"),
        ...errors(400, 404, 429),
      },
    }),
    async (c) => {
      const { email } = c.req.valid("json");
      await limit(deps, RULES.followByOrigin, clientOrigin(deps, c));
      await limit(deps, RULES.followByAddress, email);
      await requestFollow(deps, c.req.valid("param").slug, email);
      return c.json({ ok: true as const, sent: true as const }, 202);
    },
  );

  // The buttons of the mailed links: confirm a follow, or end it (the address is deleted).
  for (const [step, summary, act] of links) {
    app.openapi(
      createRoute({
        method: "post",
        path: `/status/{slug}/${step}`,
        tags: ["public"],
        summary,
        request: { params: Slug, ...body(FollowToken) },
        responses: { 200: jsonResponse(PageRef), ...errors(400, 410) },
      }),
      async (c) => {
        const { slug } = await act(deps, c.req.valid("json").token);
        return c.json({ ok: true as const, path: `/status/${slug}` }, 200);
      },
    );
  }

  app.openapi(
    bearer({
      method: "post",
      path: "/me/services/{id}/badge",
      tags: ["services"],
      summary: "Make (or replace) the service's public SVG badge address",
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), badge_url: z.string() })),
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

  // Healthchecks' project badges (GET /api/v3/badges/ lists their addresses): `*` at
  // <key>/<signature>.<format>, a tag at <key>/<signature>/<tag>.<format>.
  const projectBadge = async (c: Ctx, key: string, sig: string, tag: string, fmt: string) => {
    if (!(BADGE_FORMATS as readonly string[]).includes(fmt)) fail(404, "no such badge");
    const found = await projectBadgeState(deps, key, sig, tag);
    if (!found) fail(404, "no such badge");
    c.header("Cache-Control", "no-cache, max-age=0");
    c.header("Access-Control-Allow-Origin", "*");
    if (fmt === "json") {
      const { status, total, grace, down } = found;
      return c.json({ status, total, grace, down }, 200);
    }
    if (fmt === "shields") {
      const color = { up: "success", late: "important", down: "critical" }[found.status];
      return c.json({ schemaVersion: 1, label: found.label, message: found.status, color }, 200);
    }
    c.header("Content-Type", "image/svg+xml; charset=utf-8");
    c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    const state = ({ up: "ok", late: "warn", down: "off" } as const)[found.status];
    return c.body(badge(found.label, state), 200);
  };
  const splitFile = (file: string) => {
    const dot = file.lastIndexOf(".");
    return dot > 0 ? [file.slice(0, dot), file.slice(dot + 1)] : [file, ""];
  };
  const badgeAnswers = {
    200: {
      description: "SVG, or JSON ({status, total, grace, down}; shields.io's endpoint form)",
      content: {
        "image/svg+xml": { schema: z.string() },
        "application/json": { schema: z.object({}).loose() },
      },
    },
    ...errors(404),
  };
  app.openapi(
    createRoute({
      method: "get",
      path: "/badges/{key}/{file}",
      tags: ["public"],
      summary: "Healthchecks' project badge of every check (`*`): svg, json or shields",
      request: {
        params: z.object({
          key: z.string().max(40),
          file: z.string().max(40).meta({ example: "AbCdEfGh-2.svg" }),
        }),
      },
      responses: badgeAnswers,
    }),
    (c) => {
      const { key, file } = c.req.valid("param");
      const [sig, fmt] = splitFile(file);
      return projectBadge(c, key, sig, "*", fmt);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/badges/{key}/{sig}/{file}",
      tags: ["public"],
      summary: "Healthchecks' project badge of a tag: svg, json or shields",
      request: {
        params: z.object({
          key: z.string().max(40),
          sig: z.string().max(20),
          file: z.string().max(120).meta({ example: "backup.svg" }),
        }),
      },
      responses: badgeAnswers,
    }),
    (c) => {
      const { key, sig, file } = c.req.valid("param");
      const [tag, fmt] = splitFile(file);
      return projectBadge(c, key, sig, tag, fmt);
    },
  );

  return app;
}
