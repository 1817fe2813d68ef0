import { z } from "zod";
import {
  apiKeyView,
  createApiKey,
  listApiKeys,
  MAX_API_KEYS,
  revokeApiKey,
} from "../kv/service/api_keys.ts";
import type { Deps } from "../lib/deps.ts";
import { body, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { fail } from "../http/errors.ts";
import { guarded } from "../http/guards.ts";
import { ApiKeyInput } from "../http/account_inputs.ts";

const ApiKeySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  readonly: z.boolean().meta({ description: "A read-only key (hcr_): list and get only" }),
  created: z.string(),
  prefix: z.enum(["hcw_", "hcr_"]).meta({ description: "How the key begins" }),
}).meta({ id: "ApiKey" });

const Params = z.object({ id: idParam });

export function apiKeyRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/api-keys",
      tags: ["services"],
      summary: "The caller's keys of the Healthchecks-compatible API (never the keys themselves)",
      responses: {
        200: jsonResponse(z.object({ items: z.array(ApiKeySchema), max: z.number().int() })),
        ...errors(401),
      },
    }),
    async (c) => {
      const items = (await listApiKeys(deps.kv, c.get("account").id)).map(apiKeyView);
      return c.json({ items, max: MAX_API_KEYS }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/api-keys",
      tags: ["services"],
      summary: "Make a key of the Healthchecks-compatible API; the key is shown only here",
      description: "32 characters as Healthchecks issues them: `hcw_` (read-write) or `hcr_` " +
        "(read-only) and 28 letters and digits. Only its SHA-256 is kept. Send it as " +
        "`X-Api-Key` to /api/v1/, /api/v2/ and /api/v3/.",
      request: body(ApiKeyInput),
      responses: {
        201: jsonResponse(
          z.object({ ok: z.literal(true), item: ApiKeySchema, key: z.string() }),
          "Made",
        ),
        ...errors(400, 401, 409),
      },
    }),
    async (c) => {
      const made = await createApiKey(deps, c.get("account").id, c.req.valid("json"));
      c.header("Cache-Control", "no-store");
      return c.json({ ok: true as const, item: made.item, key: made.key }, 201);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/api-keys/{id}",
      tags: ["services"],
      summary: "Revoke a key; it stops at once",
      request: { params: Params },
      responses: { 200: jsonResponse(z.object({ ok: z.literal(true) })), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await revokeApiKey(deps, c.get("account").id, id)) fail(404, "no such API key");
      return c.json({ ok: true as const }, 200);
    },
  );

  return app;
}
