import { z } from "zod";
import { accountView } from "../kv/accounts/accounts.ts";
import { applicationView, latestApplication } from "../kv/accounts/applications.ts";
import type { Deps } from "../lib/deps.ts";
import { errors, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { AccountSchema, ApplicationStateSchema } from "../http/schemas.ts";

/** GET /api/me adds the latest application for contributor standing (null when none). */
const MeSchema = AccountSchema.extend({
  // The same fields, inlined in the document as before (a component reference would change it).
  application: z.object(ApplicationStateSchema.shape).nullable(),
}).meta({ id: "Me" });

export function meRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me",
      tags: ["account"],
      summary: "The signed-in account",
      responses: { 200: jsonResponse(MeSchema), ...errors(401) },
    }),
    async (c) => {
      const a = c.get("account");
      const app = await latestApplication(deps.kv, a);
      return c.json({
        ...accountView(a),
        application: app && applicationView(app),
      }, 200);
    },
  );

  return app;
}
