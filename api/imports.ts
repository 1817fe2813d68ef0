import { z } from "zod";
import { type ImportPlan, planImport, runImport } from "../kv/service/import.ts";
import type { Deps } from "../lib/deps.ts";
import { guarded } from "../http/guards.ts";
import { body, errors, jsonResponse, router } from "../http/router.ts";

/**
 * Bringing checks along: `POST /api/me/import` reads a Healthchecks project's
 * `GET /api/v3/checks/` answer or an Uptime Kuma backup, answers the plan (`dry_run`) or
 * creates it in one atomic.
 */

const ImportBody = z.object({
  data: z.unknown().meta({
    description: "A Healthchecks project's GET /api/v3/checks/ answer ({checks: [...]}) or an " +
      "Uptime Kuma backup file ({version, notificationList, monitorList: [...]})",
  }),
  dry_run: z.boolean().default(false).meta({
    description: "true: only the plan of what would be created and what cannot be",
  }),
}).meta({ id: "ImportInput" });

const Planned = z.object({
  from: z.string().meta({ description: "Its name in the export" }),
  name: z.string(),
  kind: z.string(),
  check: z.string(),
  interval: z.number().int().meta({
    description:
      "Minutes, one of the intervals of docs/api.md (Resources, times and text; a checked kind is checked at it, every " +
      "5 minutes at most)",
  }),
  period_seconds: z.number().int().nullable().meta({
    description: "Heartbeats on a period: the exact period kept, in seconds",
  }),
  grace_seconds: z.number().int().nullable().meta({
    description: "Heartbeats from Healthchecks: the exact grace kept, in seconds",
  }),
  schedule: z.string().nullable(),
  slug: z.string().nullable(),
  notes: z.array(z.string()).meta({ description: "What changed on the way" }),
});
const Cannot = z.object({ from: z.string(), why: z.string() });
const PlanSchema = z.object({
  source: z.enum(["healthchecks", "uptime-kuma"]),
  create: z.array(Planned),
  cannot: z.array(Cannot),
}).meta({ id: "ImportPlan" });

/** The plan as the API and the preview page show it. */
function planView(plan: ImportPlan) {
  return {
    source: plan.source,
    create: plan.create.map((p) => ({
      from: p.from,
      name: p.input.name,
      kind: p.input.kind,
      check: p.input.kind === "webhook" ? "webhook:" : p.input.check,
      interval: p.input.interval,
      period_seconds: p.input.kind === "webhook" && !p.input.schedule
        ? p.input.period ?? p.input.interval * 60
        : null,
      grace_seconds: p.input.kind === "webhook" ? p.input.grace_s ?? null : null,
      schedule: p.input.schedule?.cron ?? null,
      slug: p.input.slug ?? null,
      notes: p.notes,
    })),
    cannot: plan.cannot,
  };
}

export function importRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);
  app.openapi(
    bearer({
      method: "post",
      path: "/me/import",
      tags: ["services"],
      summary: "Import a Healthchecks project or an Uptime Kuma backup (all or nothing)",
      description:
        "Heartbeats keep their Healthchecks UUID and slug, or their Kuma push token, so " +
        "their ping addresses change only their base. Within the account's 30 services; what " +
        "cannot be created is listed with the reason.",
      request: body(ImportBody),
      responses: {
        200: jsonResponse(PlanSchema.extend({
          ok: z.boolean().optional(),
          created: z.array(z.object({ id: z.number().int(), name: z.string() }).loose()).optional(),
        })),
        ...errors(400, 401, 409),
      },
    }),
    async (c) => {
      const me = c.get("account");
      const { data, dry_run } = c.req.valid("json");
      const plan = await planImport(deps, me, data);
      if (dry_run) return c.json(planView(plan), 200);
      const created = await runImport(deps, me, plan);
      return c.json({ ok: true, ...planView(plan), created }, 200);
    },
  );
  return app;
}
