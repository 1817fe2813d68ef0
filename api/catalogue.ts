import { z } from "zod";
import { ModulePatchBody } from "../http/catalogue_inputs.ts";
import { isTeam } from "../kv/accounts/accounts.ts";
import {
  catalogueChanged,
  catalogueJson,
  metaOf,
  published,
} from "../kv/catalogue/catalogue_doc.ts";
import {
  addContributorByEmail,
  allModules,
  changeContributor,
  contributorsView,
  EDITABLE,
  getModule,
  loadModules,
  type Module,
  moduleView,
  namesOf,
  patchModule,
  SLUG_RE,
  slugsOf,
  STATES,
} from "../kv/catalogue/modules.ts";
import {
  allCounts,
  countsSnapshot,
  pointCount,
  pointsOf,
  togglePoint,
} from "../kv/catalogue/points.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import type { Deps } from "../lib/deps.ts";
import { emailSchema } from "../lib/email.ts";
import { fail } from "../http/errors.ts";
import { LEARNING_SHAPE } from "../lib/learning.ts";
import {
  body,
  createRoute,
  type Ctx,
  errors,
  idParam,
  jsonResponse,
  router,
} from "../http/router.ts";
import { actorRef, guarded, optionalToken } from "../http/guards.ts";

const Contributor = z.object({ id: z.number().int(), name: z.string() }).meta({
  id: "Contributor",
});

const ModuleSchema = z.object({
  slug: z.string(),
  title: z.string(),
  who: z.string(),
  lede: z.string(),
  about: z.string(),
  note: z.string().nullable(),
  meta: z.string(),
  state: z.enum(STATES),
  track: z.string(),
  area: z.string(),
  by: z.string(),
  url: z.string().meta({ example: "/modules/pond-life" }),
  updated: z.string().meta({ example: "2026-03-02" }),
  facts: z.array(z.tuple([z.string(), z.string()])),
  gets: z.array(z.string()),
  contributors: z.array(Contributor),
  points: z.number().int(),
  published: z.boolean(),
  ...LEARNING_SHAPE,
  licence_url: z.string().nullable()
    .meta({ description: "the licence's Creative Commons deed; null: none stated or not open" }),
  materials: z.array(z.object({
    label: z.string(),
    url: z.string().meta({ description: "an https link, or a stored file's path" }),
    type: z.string().nullable().meta({ description: "a file's media type; null for a link" }),
    size: z.number().int().nullable().meta({ description: "a file's size in bytes" }),
  })),
}).meta({ id: "Module" });

const slugParam = z.string().regex(SLUG_RE).meta({
  example: "pond-life",
});

const ContributorsAnswer = z.object({ ok: z.literal(true), contributors: z.array(Contributor) });

const isTeamCaller = (c: Ctx) => {
  if (c.get("team")) return true;
  const a = c.get("account");
  return Boolean(a && isTeam(a));
};

/** The module, if the caller may work on it: a contributor or the team (403 otherwise). */
/** After a contributor change: the catalogue is rewritten and the answer lists the people. */
async function contributorsChanged(deps: Deps, module: Module) {
  await catalogueChanged(deps);
  const names = await namesOf(deps.kv, module.contributors);
  return { ok: true as const, contributors: contributorsView(module, names) };
}

async function editable(deps: Deps, c: Ctx, slug: string): Promise<Deno.KvEntry<Module>> {
  const entry = await getModule(deps.kv, slug);
  if (!entry.value) fail(404, "no such module");
  const me = c.get("account");
  if (!isTeamCaller(c) && !(me && entry.value.contributors.includes(me.id))) {
    fail(403, "only the module's contributors and the team may do this");
  }
  return entry as Deno.KvEntry<Module>;
}

async function views(deps: Deps, mods: Module[]) {
  const names = await namesOf(deps.kv, mods.flatMap((m) => m.contributors));
  const counts = await allCounts(deps.kv);
  return mods.sort((a, b) => a.slug.localeCompare(b.slug))
    .map((m) => moduleView(m, names, counts.get(m.slug) ?? 0));
}

async function oneView(deps: Deps, m: Module) {
  const names = await namesOf(deps.kv, m.contributors);
  return moduleView(m, names, await pointCount(deps.kv, m.slug));
}

/** Routes of modules, contributors, points, the published catalogue. */

export function catalogueRoutes(deps: Deps) {
  const app = router();
  const { bearer, member } = guarded(deps);
  app.openapi(
    member({
      method: "get",
      path: "/me/modules",
      tags: ["modules"],
      summary: "The caller's modules; for the team every module (published or not)",
      responses: {
        200: jsonResponse(z.object({ items: z.array(ModuleSchema), team: z.boolean() })),
        ...errors(401),
      },
    }),
    async (c) => {
      const isTeamNow = isTeamCaller(c);
      const mods = isTeamNow
        ? await allModules(deps.kv)
        : (await loadModules(deps.kv, await slugsOf(deps.kv, c.get("account").id)))
          .filter((m) => m.contributors.includes(c.get("account").id));
      return c.json({ items: await views(deps, mods), team: isTeamNow }, 200);
    },
  );

  app.openapi(
    member({
      method: "get",
      path: "/me/modules/{slug}",
      tags: ["modules"],
      summary: "One module, for its contributors and the team",
      request: { params: z.object({ slug: slugParam }) },
      responses: { 200: jsonResponse(z.object({ item: ModuleSchema })), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const entry = await editable(deps, c, c.req.valid("param").slug);
      return c.json({ item: await oneView(deps, entry.value) }, 200);
    },
  );

  app.openapi(
    member({
      method: "patch",
      path: "/me/modules/{slug}",
      tags: ["modules"],
      summary: "Edit a module; stamps `updated`, one trail line per changed field",
      request: { params: z.object({ slug: slugParam }), ...body(ModulePatchBody) },
      responses: {
        200: jsonResponse(z.object({
          ok: z.literal(true),
          item: ModuleSchema,
          changed: z.array(z.string()),
        })),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid("param");
      const patch = c.req.valid("json");
      if (!EDITABLE.some((f) => patch[f] !== undefined)) {
        fail(400, `body: send at least one of ${EDITABLE.join(", ")}`, { field: "body" });
      }
      await editable(deps, c, slug);
      const r = await patchModule(deps.kv, slug, patch, actorRef(c), deps.clock.now(), {
        account: c.get("account")?.id ?? null,
        team: isTeamCaller(c),
      });
      if (!r.ok) fail(404, "no such module");
      if (r.changed.length > 0) await catalogueChanged(deps);
      return c.json(
        { ok: true as const, item: await oneView(deps, r.module), changed: r.changed },
        200,
      );
    },
  );

  app.openapi(
    member({
      method: "post",
      path: "/me/modules/{slug}/contributors",
      tags: ["modules"],
      summary: "Add a contributor by address (a named account with contributor standing)",
      request: {
        params: z.object({ slug: slugParam }),
        ...body(z.object({ email: emailSchema }).meta({ id: "ContributorAdd" })),
      },
      responses: { 200: jsonResponse(ContributorsAnswer), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { slug } = c.req.valid("param");
      const { email } = c.req.valid("json");
      await editable(deps, c, slug);
      const m = await addContributorByEmail(
        deps.kv,
        slug,
        email,
        actorRef(c),
        deps.clock.now(),
      );
      return c.json(await contributorsChanged(deps, m), 200);
    },
  );

  app.openapi(
    member({
      method: "delete",
      path: "/me/modules/{slug}/contributors/{id}",
      tags: ["modules"],
      summary: "Remove a contributor; a module keeps at least one (409)",
      request: { params: z.object({ slug: slugParam, id: idParam }) },
      responses: { 200: jsonResponse(ContributorsAnswer), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { slug, id } = c.req.valid("param");
      await editable(deps, c, slug);
      const r = await changeContributor(deps.kv, slug, id, "remove", actorRef(c), deps.clock.now());
      if (!r.ok) {
        if (r.reason === "last") fail(409, "a module keeps at least one contributor");
        fail(404, r.reason === "absent" ? "not a contributor of this module" : "no such module");
      }
      return c.json(await contributorsChanged(deps, r.module), 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/modules/{slug}/point",
      tags: ["modules"],
      summary: "Give the caller's point, or withdraw it when given (120 changes an hour)",
      request: { params: z.object({ slug: slugParam }) },
      responses: {
        200: jsonResponse(
          z.object({ ok: z.literal(true), points: z.number().int(), mine: z.boolean() }),
        ),
        ...errors(401, 404, 429),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid("param");
      const r = await togglePoint(deps.kv, slug, c.get("account").id, deps.clock.now());
      if (!r.ok && r.reason === "limited") {
        const max = RULES.points.max;
        fail(429, `too many requests: at most ${max} point changes an hour; try again later`, {
          retry_after: r.retryAfter,
        }, { "Retry-After": String(r.retryAfter) });
      }
      if (!r.ok) fail(404, "no such module");
      return c.json({ ok: true as const, points: r.points, mine: r.mine }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/points",
      tags: ["modules"],
      summary: "Point counts of every published module, and the caller's points",
      middleware: [optionalToken(deps)],
      responses: {
        200: jsonResponse(z.object({
          counts: z.record(z.string(), z.number().int()),
          mine: z.array(z.string()),
        })),
      },
    }),
    async (c) => {
      const p = await published(deps);
      const snap = await countsSnapshot(deps.kv);
      if (p.counts?.points !== snap.version) {
        const counts: Record<string, number> = {};
        for (const m of p.modules) counts[m.slug] = snap.counts.get(m.slug) ?? 0;
        p.counts = { points: snap.version, json: JSON.stringify(counts) };
      }
      const me = c.get("account");
      const mine = me ? (await pointsOf(deps.kv, me.id)).filter((s) => p.slugs.has(s)) : [];
      // The counts are the same for every caller: serialised once per version.
      const text = `{"counts":${p.counts.json},"mine":${JSON.stringify(mine)}}`;
      // deno-lint-ignore no-explicit-any
      return c.body(text, 200, { "content-type": "application/json; charset=UTF-8" }) as any;
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/modules/meta",
      tags: ["modules"],
      summary: "Contributors and point count of every published module",
      responses: {
        200: jsonResponse(z.object({
          items: z.record(
            z.string(),
            z.object({ contributors: z.array(Contributor), points: z.number().int() }),
          ),
        })),
      },
    }),
    async (c) => {
      const p = await published(deps);
      const counts = await countsSnapshot(deps.kv);
      // One serialisation per (catalogue, points) version: 5 000 modules make a large answer.
      if (p.meta?.points !== counts.version) {
        p.meta = {
          points: counts.version,
          json: JSON.stringify({ items: metaOf(p, counts.counts) }),
        };
      }
      // deno-lint-ignore no-explicit-any
      return c.body(p.meta.json, 200, { "content-type": "application/json; charset=UTF-8" }) as any;
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/catalogue",
      tags: ["modules"],
      summary: "The published catalogue: every published module (without points)",
      responses: {
        200: jsonResponse(z.object({
          generated: z.string(),
          count: z.number().int(),
          modules: z.array(ModuleSchema.omit({ points: true, published: true })),
        })),
      },
    }),
    async (c) => {
      const text = await catalogueJson(deps);
      // deno-lint-ignore no-explicit-any
      return c.body(text, 200, { "content-type": "application/json; charset=UTF-8" }) as any;
    },
  );

  return app;
}
