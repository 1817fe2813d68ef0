import type { Context } from "hono";
import { atomicStats } from "../kv/_atomic.ts";
import { outboxStats } from "../kv/alerts/outbox.ts";
import { constantTimeEqual } from "../lib/crypto.ts";
import type { Deps } from "../lib/deps.ts";
import { type Gauge, render, uploadsInProgress } from "../lib/metrics.ts";
import type { AppEnv } from "./router.ts";

/**
 * GET /metrics: Prometheus text. Open to a scraper that sends `Authorization: Bearer
 * METRICS_TOKEN`, or that connects from loopback without passing through a proxy (a request
 * that carries a forwarding header came from elsewhere, whatever the connection's address).
 */
export function metricsRoute(deps: Deps) {
  return async (c: Context<AppEnv>) => {
    if (!allowed(deps, c)) {
      c.header("WWW-Authenticate", 'Bearer realm="metrics"');
      return c.json({ error: "metrics need the METRICS_TOKEN bearer, or a loopback client" }, 401);
    }
    const queue = await outboxStats(deps.kv, deps.clock.now());
    const gauges: Gauge[] = [
      {
        name: "catalogue_mail_queue_depth",
        help: "Deliveries waiting in the outbox (mail, channel posts, followers' mail)",
        value: queue.depth,
      },
      {
        name: "catalogue_mail_queue_oldest_seconds",
        help: "Age of the oldest delivery waiting in the outbox (0 when empty)",
        value: queue.oldestSeconds,
      },
      {
        name: "catalogue_uploads_in_progress",
        help: "File and avatar uploads being received",
        value: uploadsInProgress(),
      },
      {
        name: "catalogue_kv_commit_retries_total",
        help: "Atomic commits that failed a version check and ran again",
        value: atomicStats.retries,
        type: "counter",
      },
      {
        name: "catalogue_kv_locked_waits_total",
        help: "KV reads and commits that met another process's lock and waited",
        value: atomicStats.locked,
        type: "counter",
      },
      {
        name: "catalogue_kv_commit_gave_up_total",
        help: "Atomics that kept failing their checks and answered 503",
        value: atomicStats.gaveUp,
        type: "counter",
      },
    ];
    c.header("Cache-Control", "no-store");
    return c.body(render(gauges), 200, { "Content-Type": "text/plain; version=0.0.4" });
  };
}

function allowed(deps: Deps, c: Context<AppEnv>): boolean {
  const token = deps.config.metricsToken;
  const auth = c.req.header("authorization");
  if (token && auth?.startsWith("Bearer ")) return constantTimeEqual(auth.slice(7), token);
  if (c.req.header("x-forwarded-for") || c.req.header("forwarded")) return false;
  const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  return isLoopback(info?.remoteAddr?.hostname ?? "");
}

function isLoopback(host: string): boolean {
  return /^127\.\d+\.\d+\.\d+$/.test(host) || host === "::1" || /^::ffff:127\./i.test(host);
}
