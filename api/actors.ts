import { z } from "zod";
import { eachAccount, standingOf } from "../kv/accounts/accounts.ts";
import { seenOf } from "../kv/accounts/dormant.ts";
import { accountParts } from "../kv/parts/mod.ts";
import { iso, isoOrNull } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { errors, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { ProfileSchema } from "../http/schemas.ts";
import { avatarUrl } from "../kv/accounts/accounts.ts";

/** Counts every actor shows, 0 when no part reports them. */
const ACTOR_COUNTS = [
  "contributions",
  "open_applications",
  "devices",
  "invitations",
  "services",
  "files",
] as const;

const ActorItem = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  slug: z.string(),
  created: z.string(),
  roles: z.array(z.string()),
  standing: z.string(),
  profile: ProfileSchema,
  avatar: z.string().nullable(),
  counts: z.record(z.string(), z.number().int()),
  last_sign_in: z.string(),
  dormant_notice: z.string().nullable(),
}).meta({ id: "TeamActor" });

export function actorRoutes(deps: Deps) {
  const app = router();
  const { team } = guarded(deps);

  app.openapi(
    team({
      method: "get",
      path: "/actors",
      tags: ["team"],
      summary: "Every account with roles, standing, profile, counts and dormant notice",
      responses: {
        200: jsonResponse(z.object({ items: z.array(ActorItem) })),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const items = [];
      for await (const e of eachAccount(deps.kv)) {
        const a = e.value;
        const counts: Record<string, number> = Object.fromEntries(ACTOR_COUNTS.map((k) => [k, 0]));
        for (const part of accountParts) {
          for (const [k, v] of Object.entries(await part.counts?.(deps, a) ?? {})) {
            counts[k] = (counts[k] ?? 0) + v;
          }
        }
        const seen = await seenOf(deps.kv, a);
        items.push({
          id: a.id,
          email: a.email,
          name: a.name,
          slug: a.slug,
          created: iso(a.created),
          roles: [...a.roles],
          standing: standingOf(a.roles),
          profile: { ...a.profile, langs: [...a.profile.langs] },
          avatar: avatarUrl(a),
          counts,
          last_sign_in: iso(seen.at),
          dormant_notice: isoOrNull(seen.notice),
        });
      }
      return c.json({ items }, 200);
    },
  );

  return app;
}
