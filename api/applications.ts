import { z } from "zod";
import { ApplyBody, DecisionBody } from "../http/account_inputs.ts";
import { type Account, getAccount, standingOf } from "../kv/accounts/accounts.ts";
import {
  applicationView,
  applyFor,
  decideApplication,
  listApplications,
} from "../kv/accounts/applications.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { body, errors, flag, idParam, jsonResponse, router } from "../http/router.ts";
import { callerOf, guarded } from "../http/guards.ts";
import { ApplicationStateSchema } from "../http/schemas.ts";

const TeamItem = ApplicationStateSchema.extend({
  text: z.string(),
  applicant: z.object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    standing: z.string(),
  }).nullable(),
}).meta({ id: "ApplicationItem" });

export function applicationRoutes(deps: Deps) {
  const app = router();
  const { bearer, team } = guarded(deps);

  app.openapi(
    bearer({
      method: "post",
      path: "/me/apply",
      tags: ["account"],
      summary: "Apply for contributor standing; one open application at a time",
      request: body(ApplyBody),
      responses: {
        202: jsonResponse(
          z.object({
            application: z.object({ id: z.number().int(), created: z.string() }),
          }),
          "Received; the decision comes by mail and shows under GET /api/me",
        ),
        ...errors(400, 401, 409),
      },
    }),
    async (c) => {
      const { text } = c.req.valid("json");
      const a = await applyFor(deps.kv, c.get("account").id, text, deps.clock.now());
      return c.json({ application: { id: a.id, created: iso(a.created) } }, 202);
    },
  );

  app.openapi(
    team({
      method: "get",
      path: "/applications",
      tags: ["team"],
      summary: "Open applications (all=1 adds decided ones), oldest first",
      request: { query: z.object({ all: flag }) },
      responses: { 200: jsonResponse(z.object({ items: z.array(TeamItem) })), ...errors(401, 403) },
    }),
    async (c) => {
      const apps = await listApplications(deps.kv, c.req.valid("query").all);
      const accounts = new Map<number, Account | null>();
      const items = [];
      for (const a of apps) {
        if (!accounts.has(a.account)) {
          accounts.set(a.account, (await getAccount(deps.kv, a.account)).value);
        }
        const who = accounts.get(a.account);
        items.push({
          ...applicationView(a),
          text: a.text,
          applicant: who
            ? { id: who.id, name: who.name, email: who.email, standing: standingOf(who.roles) }
            : null,
        });
      }
      return c.json({ items }, 200);
    },
  );

  app.openapi(
    team({
      method: "patch",
      path: "/applications/{id}",
      tags: ["team"],
      summary: "Decide an application; approval grants the contributor role",
      request: { params: z.object({ id: idParam }), ...body(DecisionBody) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), application: ApplicationStateSchema })),
        ...errors(400, 401, 403, 404, 409),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const input = c.req.valid("json");
      const decided = await decideApplication(deps, callerOf(deps, c), id, input);
      return c.json({ ok: true as const, application: applicationView(decided) }, 200);
    },
  );

  return app;
}
