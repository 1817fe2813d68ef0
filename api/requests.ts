import { z } from "zod";
import { RequestBody } from "../http/catalogue_inputs.ts";
import { createRequest, listRequests, requestView, setHandled } from "../kv/forms/requests.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, createRoute, errors, flag, idParam, jsonResponse, router } from "../http/router.ts";
import { actorRef, guarded, honeypot } from "../http/guards.ts";

const RequestItem = z.object({
  id: z.number().int(),
  name: z.string(),
  email: z.string(),
  kind: z.string(),
  text: z.string(),
  org: z.string(),
  module: z.string().nullable(),
  created: z.string(),
  handled: z.string().nullable(),
}).meta({ id: "Request" });

export function requestRoutes(deps: Deps) {
  const app = router();
  const { team } = guarded(deps);

  app.openapi(
    createRoute({
      method: "post",
      path: "/requests",
      tags: ["forms"],
      summary: "Public request or report form",
      middleware: [honeypot("request", (id) => ({ status: 202, body: { ok: true as const, id } }))],
      request: body(RequestBody),
      responses: {
        202: jsonResponse(
          z.object({ ok: z.literal(true), id: z.number().int() }),
          "Received (a filled honeypot answers the same, with an id, and does nothing)",
        ),
        ...errors(400),
      },
    }),
    async (c) => {
      const { website: _, ...input } = c.req.valid("json");
      const item = await createRequest(deps, input);
      return c.json({ ok: true as const, id: item.id }, 202);
    },
  );

  app.openapi(
    team({
      method: "get",
      path: "/requests",
      tags: ["team"],
      summary: "Open requests, newest first; ?all=1 adds handled ones",
      request: { query: z.object({ all: flag }) },
      responses: {
        200: jsonResponse(z.object({ items: z.array(RequestItem) })),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const items = await listRequests(deps.kv, c.req.valid("query").all);
      return c.json({ items: items.map(requestView) }, 200);
    },
  );

  app.openapi(
    team({
      method: "patch",
      path: "/requests/{id}",
      tags: ["team"],
      summary: "Mark a request handled (or open again with false)",
      request: { params: z.object({ id: idParam }), ...body(z.object({ handled: z.boolean() })) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), item: RequestItem })),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const item = await setHandled(deps, id, c.req.valid("json").handled, actorRef(c));
      if (!item) fail(404, "no such request");
      return c.json({ ok: true as const, item: requestView(item) }, 200);
    },
  );

  return app;
}
