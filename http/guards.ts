import { z } from "zod";
import { createMiddleware } from "hono/factory";
import type { MiddlewareHandler } from "hono";
import { type Account, isOwner, isTeam } from "../kv/accounts/accounts.ts";
import { countUse, type Rule } from "../kv/store/rate_limit.ts";
import { nextId } from "../kv/store/ids.ts";
import { findSession } from "../kv/accounts/sessions.ts";
import { actorOf, type Caller, FRESH_AGE, FRESH_REQUIRED } from "../kv/accounts/caller.ts";
import { constantTimeEqual } from "../lib/crypto.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "./errors.ts";
import { originSubject } from "../lib/ip.ts";
import { type AppEnv, createRoute, type Ctx, type RouteConfig, SECURITY } from "./router.ts";

export { FRESH_AGE };

/** The bearer token of the Authorization header; tokens are never taken from elsewhere. */
function bearerToken(c: Ctx): string | null {
  const h = c.req.header("authorization");
  const m = h?.match(/^Bearer[ ]+([A-Za-z0-9_-]+)\s*$/i);
  return m ? m[1] : null;
}

async function resolveBearer(deps: Deps, c: Ctx): Promise<Account | null> {
  const token = bearerToken(c);
  if (!token) return null;
  const found = await findSession(deps.kv, token, deps.clock.now());
  if (!found) return null;
  c.set("account", found.account);
  c.set("session", { ...found.session, hash: found.hash });
  return found.account;
}

/** Any valid bearer token; 401 otherwise. */
export const requireToken = (deps: Deps) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (!await resolveBearer(deps, c)) fail(401, "sign-in required: send a valid bearer token");
    await next();
  });

/** Reads a bearer token when one is sent; public routes stay public without it. */
export const optionalToken = (deps: Deps) =>
  createMiddleware<AppEnv>(async (c, next) => {
    await resolveBearer(deps, c);
    await next();
  });

/** True when the request carries the configured service token (X-Service-Token only). */
export function hasServiceToken(deps: Deps, c: Ctx): boolean {
  const sent = c.req.header("x-service-token");
  const expected = deps.config.serviceToken;
  return sent !== undefined && !!expected && constantTimeEqual(sent, expected);
}

/** The team: the service token, or a reviewer's or owner's bearer token. */
export const requireTeam = (deps: Deps) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (hasServiceToken(deps, c)) {
      c.set("team", { via: "service" });
      return await next();
    }
    const account = await resolveBearer(deps, c);
    if (!account) fail(401, "sign-in required: a valid bearer token or service token");
    if (!isTeam(account)) fail(403, "this needs the reviewer or owner role");
    c.set("team", { via: "account", account });
    await next();
  });

/** Any bearer token, or the team's service token (which acts as the team). */
const requireMember = (deps: Deps) => {
  const token = requireToken(deps);
  return createMiddleware<AppEnv>(async (c, next) => {
    if (hasServiceToken(deps, c)) {
      c.set("team", { via: "service" });
      return await next();
    }
    return await token(c, next);
  });
};

/** The owner's bearer token. */
export const requireOwner = (deps: Deps) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const account = await resolveBearer(deps, c);
    // The service token is known (team) but is not the owner: 403, as for a reviewer.
    if (!account && hasServiceToken(deps, c)) fail(403, "this needs the owner role");
    if (!account) fail(401, "sign-in required: send a valid bearer token");
    if (!isOwner(account)) fail(403, "this needs the owner role");
    await next();
  });

/**
 * A route helper for who may call: `secured("team", guard)(route)` is the route with the
 * document's `security` and the guard that enforces it, declared together, the guard running
 * before the route's own middleware and its validation.
 */
export function secured(who: keyof typeof SECURITY, guard: MiddlewareHandler<AppEnv>) {
  return <const R extends RouteConfig>(route: R) =>
    createRoute({
      ...route,
      security: SECURITY[who],
      middleware: [guard, ...[route.middleware ?? []].flat()],
    });
}

/**
 * The route helpers of an area: `bearer(route)` needs a device token (401 without one),
 * `team(route)` the team's service token or a reviewer's or owner's token (401, 403),
 * `member(route)` any device token or the service token (401).
 */
export function guarded(deps: Deps) {
  return {
    bearer: secured("bearer", requireToken(deps)),
    team: secured("team", requireTeam(deps)),
    member: secured("team", requireMember(deps)),
  };
}

/** The honeypot field of the public forms: people leave it empty. */
export const honeypotField = z.string().max(2000).nullish().meta({
  description: "Honeypot: leave empty",
});

/**
 * A filled `website` field (the honeypot) answers before validation exactly as a stored form
 * would (same status, same shape, a fresh id of the kind a real one gets), so a bot learns
 * nothing, and nothing is stored or mailed. The body stays cached for the validator.
 */
export const honeypot = (
  kind: "request" | "proposal",
  answer: (id: number) => { status: 201 | 202; body: object },
) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const b = await c.req.json().catch(() => null) as Record<string, unknown> | null;
    if (b && typeof b === "object" && b.website !== undefined && b.website !== null) {
      if (typeof b.website !== "string" || b.website.trim() !== "") {
        const { status, body } = answer(
          nextId(kind, 0),
        );
        return c.json(body, status);
      }
    }
    await next();
  });

const who = (subject: string | number) =>
  typeof subject === "string" ? originSubject(subject) : subject;

/** docs/api.md "Limits": some actions need a token signed in less than 15 minutes ago. */
export function requireFresh(deps: Deps, c: Ctx): void {
  if (!callerOf(deps, c).fresh) fail(409, FRESH_REQUIRED, { fresh_required: true });
}

/** Who calls, for the domain functions (kv/accounts/caller.ts), from what the guards found. */
export function callerOf(deps: Deps, c: Ctx): Caller {
  const s = c.get("session");
  return {
    account: c.get("account") ?? null,
    team: c.get("team")?.via ?? null,
    fresh: s !== undefined && deps.clock.now() - s.created < FRESH_AGE,
  };
}

/** "account:<id>" for the trail, "service" for the team token. */
export function actorRef(c: Ctx): string {
  return actorOf({
    account: c.get("account") ?? null,
    team: c.get("team")?.via ?? null,
    fresh: false,
  });
}

/** The client address: the connection's, or the first X-Forwarded-For entry behind a proxy. */
export function clientOrigin(deps: Deps, c: Ctx): string {
  if (deps.config.trustProxy) {
    const xff = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
    if (xff) return xff.slice(0, 64);
  }
  const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  return info?.remoteAddr?.hostname ?? "unknown";
}

/** Counts one use of a rate-limited action; over the limit answers 429 with Retry-After. */
export async function limit(deps: Deps, rule: Rule, subject: string | number): Promise<void> {
  const v = await countUse(deps.kv, rule, who(subject), deps.clock.now());
  if (!v.ok) {
    fail(429, `too many requests: at most ${rule.max} an hour; try again later`, {
      retry_after: v.retryAfter,
    }, { "Retry-After": String(v.retryAfter) });
  }
}
