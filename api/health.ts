import { z } from "zod";
import { verifyTrail } from "../kv/store/trail.ts";
import type { Deps } from "../lib/deps.ts";
import { createRoute, flag, jsonResponse, router } from "../http/router.ts";
import { healthz } from "./healthz.ts";

const Health = z.object({
  ok: z.boolean(),
  db: z.enum(["ok", "fail"]),
  migrations: z.number().int().optional(),
  error: z.string().optional(),
}).meta({ id: "Health" });

const Verdict = z.object({
  ok: z.boolean(),
  lines: z.number().int(),
  head: z.string(),
  checked: z.number().int(),
  from: z.number().int(),
  broken: z.object({ seq: z.number().int(), reason: z.string() }).nullable(),
  waiting: z.number().int().meta({
    description: "Lines written with their changes and not chained yet (seconds at most)",
  }),
}).meta({ id: "TrailVerdict" });

export function healthRoutes(deps: Deps) {
  const app = router();

  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["public"],
      summary: "Database state and schema level",
      responses: { 200: jsonResponse(Health), 503: jsonResponse(Health, "Database unavailable") },
    }),
    healthz(deps),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/audit/verify",
      tags: ["public"],
      summary: "Verify the record trail's hash chain (from the last checkpoint; ?full=1 all)",
      request: { query: z.object({ full: flag }) },
      responses: { 200: jsonResponse(Verdict) },
    }),
    async (c) => c.json(await verifyTrail(deps.kv, c.req.valid("query").full), 200),
  );

  return app;
}
