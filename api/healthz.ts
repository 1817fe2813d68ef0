/**
 * GET /api/healthz, answered by app.ts itself: load balancers and uptime checks ask for it first,
 * often right after a start, and it needs neither the route layer's zod schemas nor a route area.
 * api/health.ts describes it in the OpenAPI document with this same handler.
 */
import type { Context } from "hono";
import { countMigrations } from "../kv/store/migrations.ts";
import type { Deps } from "../lib/deps.ts";
import { after, type Timer } from "../lib/timers.ts";

/** How long the database may take before the answer is 503. */
const TIMEOUT_MS = 3000;

export function healthz(deps: Deps) {
  return async (_c: Context): Promise<Response> => {
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = after(TIMEOUT_MS, () => reject(new Error("timeout")));
    });
    try {
      const migrations = await Promise.race([countMigrations(deps.kv), timeout]);
      return answer(200, { ok: true, db: "ok", migrations });
    } catch {
      return answer(503, { ok: false, db: "fail", error: "the database does not answer" });
    } finally {
      timer?.cancel();
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
