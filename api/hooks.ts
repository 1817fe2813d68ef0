import { z } from "zod";
import { beat, countHeartbeat, pingAnswer } from "../kv/hooks.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "./_errors.ts";
import { cutChars } from "../lib/text.ts";
import { createRoute, type Ctx, errors, json, router } from "./_api.ts";
import { clientOrigin } from "./_guards.ts";

/** Status texts longer than this are cut, not refused: a beat should never be lost to it. */
export const STATUS_MAX = 120;

const Answer = z.object({ ok: z.literal(true), service: z.string(), received: z.string() })
  .meta({ id: "HeartbeatAnswer" });

const params = z.object({
  key: z.string().meta({ example: "…43 characters…" }),
});
const query = z.object({
  status: z.string().optional().meta({ description: `Up to ${STATUS_MAX} characters` }),
});

/** The status text of a ping: `?status=` or a JSON body `{status}`. */
async function statusOf(c: Ctx): Promise<string> {
  let status = c.req.query("status");
  if (c.req.method === "POST" && /json/i.test(c.req.header("content-type") ?? "")) {
    const raw = await c.req.text();
    if (raw.trim() !== "") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        fail(400, 'body must be JSON such as {"status": "..."}');
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        fail(400, 'body must be a JSON object such as {"status": "..."}');
      }
      const s = (parsed as { status?: unknown }).status;
      if (s !== undefined && s !== null && typeof s !== "string") {
        fail(400, "status: must be text", { field: "status" });
      }
      if (typeof s === "string") status = s;
    }
  }
  return cutChars((status ?? "").trim(), STATUS_MAX);
}

/** GET and POST /api/hooks/<key>: public, authorised by the secret key alone. */
export function hookRoutes(deps: Deps) {
  const app = router();
  for (const method of ["get", "post"] as const) {
    app.openapi(
      createRoute({
        method,
        path: "/hooks/{key}",
        tags: ["services"],
        summary: "Heartbeat: records a beat and an optional status text",
        description: "The status comes from `?status=` or a JSON body `{status}`; 600 calls " +
          "an hour per address. Answered once the beat is stored durably.",
        request: { params, query },
        responses: { 200: json(Answer), ...errors(400, 404, 429) },
      }),
      async (c) => {
        // Hono answers HEAD with the GET handler. HEAD is safe by definition: a link preview or
        // a checker sending one must not record a beat that hides an outage (as /api/verify).
        if (c.req.method === "HEAD") {
          fail(405, "send GET or POST to record a beat", {}, { Allow: "GET, POST" });
        }
        const { key } = c.req.valid("param");
        const verdict = await countHeartbeat(deps, clientOrigin(deps, c));
        if (!verdict.ok) {
          fail(429, "too many heartbeats from this address: at most 600 an hour", {
            retry_after: verdict.retryAfter,
          }, { "Retry-After": String(verdict.retryAfter) });
        }
        const status = await statusOf(c);
        const done = await beat(deps, key, status);
        if (!done) fail(404, "unknown hook key");
        c.header("Cache-Control", "no-store");
        return c.json(pingAnswer(done.ref, done.at), 200);
      },
    );
  }
  return app;
}
