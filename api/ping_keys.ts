import { z } from "zod";
import { pingKeyMade, rotatePingKey, rotatePush } from "../kv/service/commands.ts";
import { isoOrNull } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { guarded } from "../http/guards.ts";
import { errors, idParam, jsonResponse, router } from "../http/router.ts";

/**
 * The secrets of other products' ping addresses: the account's Healthchecks ping key
 * (`/ping/<ping key>/<slug>`) and a heartbeat's Uptime Kuma push token (`/api/push/<token>`).
 * Each is shown once, in the answer that makes it; only its hash is kept.
 */

/** Where Healthchecks clients send pings: its `PING_ENDPOINT`. */
const pingEndpoint = (deps: Deps) => `${deps.config.baseUrl}/ping/`;

export function pingKeyRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);
  app.openapi(
    bearer({
      method: "get",
      path: "/me/ping-key",
      tags: ["services"],
      summary: "Whether the account has a ping key for Healthchecks' slug addresses",
      responses: {
        200: jsonResponse(z.object({
          exists: z.boolean(),
          created: z.string().nullable(),
          ping_endpoint: z.string().meta({ description: "Healthchecks' PING_ENDPOINT here" }),
        })),
        ...errors(401),
      },
    }),
    async (c) => {
      const made = await pingKeyMade(deps.kv, c.get("account").id);
      c.header("Cache-Control", "no-store");
      return c.json({
        exists: made !== null,
        created: isoOrNull(made),
        ping_endpoint: pingEndpoint(deps),
      }, 200);
    },
  );
  app.openapi(
    bearer({
      method: "post",
      path: "/me/ping-key",
      tags: ["services"],
      summary: "A new ping key (22 characters, as Healthchecks'); the old one stops at once",
      description: "Every heartbeat answers `/ping/<ping key>/<slug>`. The key is shown only " +
        "in this answer; only its hash is kept.",
      responses: {
        200: jsonResponse(
          z.object({ ok: z.literal(true), ping_key: z.string(), ping_endpoint: z.string() }),
        ),
        ...errors(401),
      },
    }),
    async (c) => {
      const key = await rotatePingKey(deps, c.get("account").id);
      c.header("Cache-Control", "no-store");
      return c.json({ ok: true as const, ping_key: key, ping_endpoint: pingEndpoint(deps) }, 200);
    },
  );
  app.openapi(
    bearer({
      method: "post",
      path: "/me/services/{id}/push",
      tags: ["services"],
      summary: "A new Uptime Kuma push address for a heartbeat; the old one stops at once",
      description:
        "`/api/push/<token>?status=up|down&msg=&ping=` as Uptime Kuma's push monitors. " +
        "The address is shown only in this answer.",
      request: { params: z.object({ id: idParam }) },
      responses: {
        200: jsonResponse(z.object({ ok: z.literal(true), push_url: z.string() })),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const token = await rotatePush(deps, c.get("account").id, c.req.valid("param").id);
      if (!token) fail(404, "no such service");
      c.header("Cache-Control", "no-store");
      return c.json(
        { ok: true as const, push_url: `${deps.config.baseUrl}/api/push/${token}` },
        200,
      );
    },
  );
  return app;
}
