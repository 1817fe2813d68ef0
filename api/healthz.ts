/**
 * GET /api/healthz, answered by app.ts itself: load balancers and uptime checks ask for it first,
 * often right after a start, and it needs neither the route layer's zod schemas nor a route area.
 * api/health.ts describes it in the OpenAPI document with this same handler.
 */
import type { Context } from "hono";
import { countMigrations } from "../kv/store/migrations.ts";
import type { Deps } from "../lib/deps.ts";
import { deadline } from "../lib/timers.ts";

/** How long the database may take before the answer is 503. */
const TIMEOUT_MS = 3000;

export function healthz(deps: Deps, timeoutMs = TIMEOUT_MS) {
  const within = deadline(timeoutMs);
  return async (_c: Context): Promise<Response> => {
    try {
      const migrations = await within(countMigrations(deps.kv));
      return answer(200, { ok: true, db: "ok", migrations });
    } catch {
      return answer(503, { ok: false, db: "fail", error: "the database does not answer" });
    }
  };
}

/**
 * The answer with its length: compression leaves an answer this short alone (http/compression.ts),
 * and a process's first answer, often this one, does not wait for its body to be read as a stream.
 */
function answer(status: 200 | 503, body: object): Response {
  const text = JSON.stringify(body);
  return new Response(text, {
    status,
    headers: {
      "Content-Type": "application/json",
      "Content-Length": String(text.length),
      "Cache-Control": "no-store",
    },
  });
}
