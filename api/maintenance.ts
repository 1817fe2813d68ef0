import { z } from "zod";
import { listWindows } from "../kv/service/maintenance.ts";
import { createWindow, deleteWindow, windowView } from "../kv/service/windows.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { WindowBody } from "../http/services_inputs.ts";

const WindowSchema = z.object({
  id: z.number(),
  name: z.string(),
  services: z.array(z.number()),
  groups: z.array(z.string()),
  places: z.array(z.string()),
  from: z.string().nullable(),
  to: z.string().nullable(),
  cron: z.string().nullable(),
  tz: z.string().nullable(),
  minutes: z.number().nullable(),
  created: z.string(),
  running_until: z.string().nullable().meta({
    description: "While it runs: when this run ends; null otherwise",
  }),
  next_start: z.string().nullable().meta({ description: "Its next start; null if none" }),
}).meta({ id: "MaintenanceWindow" });

/** Maintenance windows (kv/service/maintenance.ts, kv/service/windows.ts). */
export function maintenanceRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/maintenance",
      tags: ["services"],
      summary: "The caller's maintenance windows",
      responses: { 200: jsonResponse(z.object({ items: z.array(WindowSchema) })), ...errors(401) },
    }),
    async (c) => {
      const now = deps.clock.now();
      const list = await listWindows(deps.kv, c.get("account").id);
      return c.json({ items: list.map((w) => windowView(w, now)) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/maintenance",
      tags: ["services"],
      summary: "Add a maintenance window: once (from, to) or on a schedule (cron, tz, minutes)",
      description: "While it runs, failures of the services it covers alert nobody; a failure " +
        "that lasts past its end alerts then. Their state reads maintenance and their history " +
        "leaves those stretches out of uptime. At most 20 windows.",
      request: body(WindowBody),
      responses: { 201: jsonResponse(z.object({ item: WindowSchema })), ...errors(400, 401, 409) },
    }),
    async (c) => {
      const w = await createWindow(deps, c.get("account").id, c.req.valid("json"));
      return c.json({ item: windowView(w, deps.clock.now()) }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/maintenance/{id}",
      tags: ["services"],
      summary: "Delete a maintenance window",
      request: { params: z.object({ id: idParam }) },
      responses: { 200: jsonResponse(z.object({ ok: z.literal(true) })), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await deleteWindow(deps, c.get("account").id, id)) fail(404, "no such window");
      return c.json({ ok: true as const }, 200);
    },
  );

  return app;
}
