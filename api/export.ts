import { z } from "zod";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { errors, jsonResponse, router } from "../http/router.ts";
import { guarded, requireFresh } from "../http/guards.ts";
import { refusal } from "../http/words.ts";

const ids = z.array(z.number().int().positive()).max(1000).default([]);
const EraseBody = z.object({ keep: ids, remove: ids }).meta({ id: "ErasureDecisions" });

const Erased = z.object({
  ok: z.literal(true),
  kept: z.number().int(),
  unpublished: z.number().int(),
  deleted: z.number().int(),
}).meta({ id: "Erased" });

/**
 * Export and erasure walk every data area (kv/parts/): imported by the first export or erasure,
 * not with the area, which every `/api/me` request mounts (DELETE /api/me is here).
 */
const exporting = () => import("../kv/parts/export.ts");
const erasing = () => import("../kv/parts/erasure.ts");

export function exportRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/export",
      tags: ["account"],
      summary: "Everything held about the caller, as a JSON download",
      responses: {
        200: jsonResponse(z.record(z.string(), z.unknown()), "The export"),
        ...errors(401),
      },
    }),
    async (c) => {
      const a = c.get("account");
      const data = await (await exporting()).exportAccount(deps, a);
      c.header("Content-Disposition", `attachment; filename="account-${a.id}-export.json"`);
      c.header("Cache-Control", "no-store");
      return c.json(data, 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me",
      tags: ["account"],
      summary: "Erase the account and everything it owns (fresh token)",
      description: "Optional body `{keep: [proposal_id], remove: [proposal_id]}` decides per " +
        "published proposal whether the module keeps the name.",
      request: {
        body: { required: false, content: { "application/json": { schema: EraseBody } } },
      },
      responses: { 200: jsonResponse(Erased), ...errors(400, 401, 409) },
    }),
    async (c) => {
      requireFresh(deps, c);
      const raw = await c.req.text();
      let parsed: unknown = {};
      if (raw.trim() !== "") {
        try {
          parsed = JSON.parse(raw);
        } catch {
          fail(400, "body must be a JSON object (Content-Type: application/json)");
        }
      }
      const got = EraseBody.safeParse(parsed ?? {});
      if (!got.success) {
        const { error, field } = refusal(got.error, "body");
        fail(400, error, { field });
      }
      const keep = new Set(got.data.keep);
      const remove = new Set(got.data.remove);
      const both = [...keep].find((id) => remove.has(id));
      if (both !== undefined) {
        fail(400, `keep: proposal ${both} is in both keep and remove`, { field: "keep" });
      }
      const counts = await (await erasing()).eraseAccount(deps, c.get("account"), { keep, remove });
      return c.json({ ok: true as const, ...counts }, 200);
    },
  );

  return app;
}
