/**
 * Every request counted (GET /metrics), timed and logged by its route pattern, with nosniff on its
 * answer: in the app's middleware (app.ts `entrance`), and in the pings' own routes, which come
 * ahead of it (areas.ts `first`) and answer every request they match, so none is counted twice.
 */
import type { Context, MiddlewareHandler } from "hono";
import { answerError } from "./errors.ts";
import { logRequest } from "../lib/log.ts";
import { requestEnded, requestStarted } from "../lib/metrics.ts";
import { setHeader } from "./compression.ts";
import type { AppEnv } from "./router.ts";

/** Counts, times and logs every request by its route pattern; sets nosniff on every answer. */
export const measured: MiddlewareHandler<AppEnv> = async (c, next) => {
  const t0 = performance.now();
  const route = routePattern(c);
  const stats = requestStarted(c.req.method, route);
  try {
    await next();
  } finally {
    requestDone(stats, c.req.method, route, c.res.status, t0);
  }
  // Set on the finished response itself: c.header() after next() copies the whole Response.
  setHeader(c, "X-Content-Type-Options", "nosniff");
};

/**
 * A route's handler counted, timed and logged as `route`, without a middleware around it: for
 * the pings, whose routes come ahead of the app's middleware (areas.ts `first`) and answer every
 * request they match, so nothing after them counts it again. The handler's own answer carries
 * its headers (nosniff among them: a ping's are constant); a refusal it throws is answered here
 * (http/errors.ts, as the app's error handler would) with nosniff, so it is counted by its status
 * too. `outcome` is told each answer's status.
 */
export function measuredHandler(
  route: string,
  handler: (c: Context<AppEnv>) => Promise<Response>,
  outcome?: (status: number) => void,
): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    const t0 = performance.now();
    const stats = requestStarted(c.req.method, route);
    let res: Response;
    try {
      res = await handler(c);
    } catch (err) {
      res = answerError(err as Error, c);
      res.headers.set("X-Content-Type-Options", "nosniff");
    }
    requestDone(stats, c.req.method, route, res.status, t0);
    outcome?.(res.status);
    return res;
  };
}

/** Counts, times and logs a finished request by its route pattern. */
function requestDone(
  stats: ReturnType<typeof requestStarted>,
  method: string,
  route: string,
  status: number,
  t0: number,
): void {
  const seconds = (performance.now() - t0) / 1000;
  requestEnded(stats, status, seconds);
  // The route pattern, never the raw path: a path can hold a hook key or a token.
  logRequest(method, route, status, Math.round(seconds * 10_000) / 10);
}

/**
 * The pattern of the route that answers this request (its last matched handler that is not a
 * middleware), or "unmatched"; known before the handlers run, so in-flight counts are right.
 */
function routePattern(c: Context<AppEnv>): string {
  const matched = c.req.matchedRoutes;
  for (let i = matched.length - 1; i >= 0; i--) {
    if (matched[i].method !== "ALL") {
      const path = matched[i].path;
      return path.includes("{") ? path.replace(CONSTRAINT, "$1") : path;
    }
  }
  return "unmatched";
}

/** A parameter's pattern in a route (`:id{[0-9]{1,15}}`): the metrics and logs say `:id`. */
const CONSTRAINT = /(:\w+)\{.*?\}(?=\/|$)/g;
