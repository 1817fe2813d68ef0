import { z } from "zod";
import { endAllSessions, endSession, listSessions } from "../kv/accounts/sessions.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { errors, flag, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";

const Device = z.object({
  id: z.number().int(),
  created: z.string(),
  expires: z.string(),
  last_used: z.string(),
  current: z.boolean(),
}).meta({ id: "Device" });

const Ended = z.object({ ok: z.literal(true), ended: z.number().int() });

export function deviceRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/devices",
      tags: ["sign-in"],
      summary: "Live sessions of the account, newest first",
      responses: { 200: jsonResponse(z.object({ items: z.array(Device) })), ...errors(401) },
    }),
    async (c) => {
      const me = c.get("session");
      const now = deps.clock.now();
      const items = (await listSessions(deps.kv, me.account))
        .filter(({ session }) => session.expires > now)
        .sort((a, b) => b.session.id - a.session.id)
        .map(({ session, hash }) => ({
          id: session.id,
          created: iso(session.created),
          expires: iso(session.expires),
          last_used: iso(session.last_used),
          current: hash === me.hash,
        }));
      return c.json({ items }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/devices/{id}",
      tags: ["sign-in"],
      summary: "End one session",
      request: { params: z.object({ id: idParam }) },
      responses: { 200: jsonResponse(Ended), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const ok = await endSession(deps.kv, c.get("account").id, id);
      if (!ok) fail(404, "no such session");
      return c.json({ ok: true as const, ended: 1 }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/devices",
      tags: ["sign-in"],
      summary: "End every session, this one included (needs ?all=1)",
      request: { query: z.object({ all: flag }) },
      responses: { 200: jsonResponse(Ended), ...errors(400, 401) },
    }),
    async (c) => {
      if (!c.req.valid("query").all) fail(400, "all: send all=1 to end every session");
      const ended = await endAllSessions(deps.kv, c.get("account").id);
      return c.json({ ok: true as const, ended }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/token",
      tags: ["sign-in"],
      summary: "Sign this device out",
      responses: { 200: jsonResponse(Ended), ...errors(401) },
    }),
    async (c) => {
      await endSession(deps.kv, c.get("account").id, c.get("session").id);
      return c.json({ ok: true as const, ended: 1 }, 200);
    },
  );

  return app;
}
