import { z } from "zod";
import { RULES } from "../kv/store/rate_limit.ts";
import { search } from "../kv/search/search.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { createRoute, errors, jsonResponse, router } from "../http/router.ts";
import { clientOrigin, limit } from "../http/guards.ts";

const SearchAnswer = z.object({
  ok: z.literal(true),
  people: z.array(z.object({
    id: z.number().int(),
    name: z.string(),
    org: z.string(),
    role: z.string(),
    about: z.string(),
  })),
  journal: z.array(z.object({
    id: z.number().int(),
    text: z.string(),
    created: z.string(),
    actor_id: z.number().int(),
    name: z.string(),
  })),
  modules: z.array(z.object({
    title: z.string(),
    slug: z.string(),
    name: z.string(),
    url: z.string().meta({ example: "/modules/pond-life" }),
    field: z.string().meta({ description: "the field the snippet comes from" }),
    snippet: z.string().meta({ description: "up to 160 characters around the first match" }),
  })),
  suggestion: z.string().nullable().meta({
    description: "the query as probably meant, when a word matched modules only with one edit",
  }),
}).meta({ id: "SearchAnswer" });

export function searchRoutes(deps: Deps) {
  const app = router();

  app.openapi(
    createRoute({
      method: "get",
      path: "/search",
      tags: ["public"],
      summary: "Search named people, public journal entries and published modules",
      request: {
        query: z.object({
          q: z.string().trim().min(2, { message: "must be at least 2 characters" }).max(200),
        }),
      },
      responses: { 200: jsonResponse(SearchAnswer), ...errors(400, 429) },
    }),
    async (c) => {
      // The query is never logged or stored; only the origin's counter is.
      const { q } = c.req.valid("query");
      await limit(deps, RULES.search, clientOrigin(deps, c));
      const found = await search(deps, q);
      c.header("Cache-Control", "no-store");
      return c.json({
        ok: true as const,
        people: found.people,
        journal: found.journal.map((j) => ({ ...j, created: iso(j.created) })),
        modules: found.modules,
        suggestion: found.suggestion,
      }, 200);
    },
  );

  return app;
}
