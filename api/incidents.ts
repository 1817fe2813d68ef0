import { z } from "zod";
import {
  deleteIncident,
  getIncident,
  IMPACTS,
  INCIDENT_STATES,
  incidentView,
  listIncidents,
  openIncident,
  postIncidentUpdate,
} from "../kv/status/incidents.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { IncidentBody, IncidentUpdateBody } from "../http/incident_inputs.ts";

const UpdateSchema = z.object({
  id: z.number().int(),
  at: z.string(),
  state: z.enum(INCIDENT_STATES),
  text: z.string(),
}).meta({ id: "IncidentUpdate" });

export const IncidentSchema = z.object({
  id: z.number().int(),
  title: z.string(),
  services: z.array(z.number().int()),
  impact: z.enum(IMPACTS),
  state: z.enum(INCIDENT_STATES).meta({ description: "The latest update's state" }),
  created: z.string(),
  resolved: z.string().nullable().meta({ description: "When it was resolved; null: open" }),
  duration_s: z.number().int().nullable().meta({ description: "From opened to resolved" }),
  updates: z.array(UpdateSchema).meta({ description: "Oldest first" }),
}).meta({ id: "Incident" });

const Ok = z.object({ ok: z.literal(true) });
const Params = z.object({ id: idParam });

/** Incidents of the caller's status page (kv/status/incidents.ts). */
export function incidentRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/incidents",
      tags: ["services"],
      summary: "The incidents of the caller's status page (a year, newest first)",
      responses: {
        200: jsonResponse(z.object({ items: z.array(IncidentSchema) })),
        ...errors(401),
      },
    }),
    async (c) => {
      const list = await listIncidents(deps.kv, c.get("account").id, deps.clock.now());
      return c.json({ items: list.map(incidentView) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/incidents",
      tags: ["services"],
      summary: "Open an incident with its first update; mailed to the page's followers",
      request: body(IncidentBody),
      responses: {
        201: jsonResponse(z.object({ item: IncidentSchema })),
        ...errors(400, 401, 429),
      },
    }),
    async (c) => {
      const i = await openIncident(deps, c.get("account").id, c.req.valid("json"));
      return c.json({ item: incidentView(i) }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/incidents/{id}",
      tags: ["services"],
      summary: "One incident with its updates",
      request: { params: Params },
      responses: { 200: jsonResponse(z.object({ item: IncidentSchema })), ...errors(401, 404) },
    }),
    async (c) => {
      const i = await getIncident(deps.kv, c.get("account").id, c.req.valid("param").id);
      if (!i) fail(404, "no such incident");
      return c.json({ item: incidentView(i) }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/incidents/{id}/updates",
      tags: ["services"],
      summary: "Post an update (resolved resolves it); mailed to the page's followers",
      request: { params: Params, ...body(IncidentUpdateBody) },
      responses: {
        201: jsonResponse(z.object({ item: IncidentSchema })),
        ...errors(400, 401, 404, 409, 429),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const i = await postIncidentUpdate(deps, c.get("account").id, id, c.req.valid("json"));
      return c.json({ item: incidentView(i) }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/incidents/{id}",
      tags: ["services"],
      summary: "Delete an incident and its updates",
      request: { params: Params },
      responses: { 200: jsonResponse(Ok), ...errors(401, 404) },
    }),
    async (c) => {
      if (!await deleteIncident(deps, c.get("account").id, c.req.valid("param").id)) {
        fail(404, "no such incident");
      }
      return c.json({ ok: true as const }, 200);
    },
  );

  return app;
}
