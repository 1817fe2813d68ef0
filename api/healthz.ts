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
  return async (c: Context) => {
    c.header("Cache-Control", "no-store");
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = after(TIMEOUT_MS, () => reject(new Error("timeout")));
    });
    try {
      const migrations = await Promise.race([countMigrations(deps.kv), timeout]);
      return c.json({ ok: true, db: "ok" as const, migrations }, 200);
    } catch {
      return c.json(
        { ok: false, db: "fail" as const, error: "the database does not answer" },
        503,
      );
    } finally {
      timer?.cancel();
    }
  };
}
