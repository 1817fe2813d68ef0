import { z } from "zod";
import { type Account, standingOf } from "../kv/accounts.ts";
import { latestApplication } from "../kv/applications.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { bearer, createRoute, errors, json, router } from "./_api.ts";
import { requireToken } from "./_guards.ts";

export const ActorSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  created: z.string(),
  roles: z.array(z.string()),
  standing: z.string(),
}).meta({ id: "Actor" });

export const ProfileSchema = z.object({
  org: z.string(),
  role: z.string(),
  about: z.string(),
  bio: z.string(),
  place: z.string(),
  contact: z.string(),
  website: z.string(),
  langs: z.array(z.string()),
}).meta({ id: "Profile" });

export const AccountSchema = ActorSchema.extend({
  kind: z.string(),
  slug: z.string(),
  profile: ProfileSchema,
  avatar: z.string().nullable(),
}).meta({ id: "Account" });

export function actorView(a: Account) {
  return {
    id: a.id,
    email: a.email,
    name: a.name,
    created: iso(a.created),
    roles: [...a.roles],
    standing: standingOf(a.roles),
  };
}

/** Where the account's picture is served, with its hash so caches see every change. */
export const avatarUrl = (a: Account) =>
  a.avatar ? `/api/avatars/${a.id}?v=${a.avatar.etag.slice(0, 12)}` : null;

export function accountView(a: Account) {
  return {
    ...actorView(a),
    kind: a.kind,
    slug: a.slug,
    profile: { ...a.profile, langs: [...a.profile.langs] },
    avatar: avatarUrl(a),
  };
}

/** GET /api/me adds the latest application for contributor standing (null when none). */
export const MeSchema = AccountSchema.extend({
  application: z.object({
    id: z.number().int(),
    created: z.string(),
    outcome: z.enum(["approved", "declined"]).nullable(),
    reason: z.string().nullable(),
    decided: z.string().nullable(),
  }).nullable(),
}).meta({ id: "Me" });

export function meRoutes(deps: Deps) {
  const app = router();

  app.openapi(
    createRoute({
      method: "get",
      path: "/me",
      tags: ["account"],
      summary: "The signed-in account",
      security: bearer,
      middleware: [requireToken(deps)],
      responses: { 200: json(MeSchema), ...errors(401) },
    }),
    async (c) => {
      const a = c.get("account");
      const app = await latestApplication(deps.kv, a);
      return c.json({
        ...accountView(a),
        application: app && {
          id: app.id,
          created: iso(app.created),
          outcome: app.outcome,
          reason: app.reason,
          decided: app.decided === null ? null : iso(app.decided),
        },
      }, 200);
    },
  );

  return app;
}
