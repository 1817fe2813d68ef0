/**
 * Web sessions: a browser that opens a sign-in link holds the same device session a client
 * of the API gets (kv/accounts/sessions.ts), its token in a cookie instead of a header. The cookie is
 * HttpOnly, SameSite=Lax and, when the service is reached over https, Secure with the
 * `__Host-` prefix (no Domain, Path=/). Pages look the session up with `findSession`, as the
 * API's bearer guard does. The JSON API never reads this cookie.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { isTeam } from "../kv/accounts/accounts.ts";
import { findSession, type Session } from "../kv/accounts/sessions.ts";
import type { Deps } from "../lib/deps.ts";
import type { AppEnv } from "../http/router.ts";

const secure = (deps: Deps) => deps.config.baseUrl.startsWith("https:");

const cookieName = (deps: Deps) => secure(deps) ? "__Host-session" : "session";

/** Puts the cookie's session and account on the context (as the bearer guards do), if live. */
export async function readWebSession(deps: Deps, c: Context<AppEnv>): Promise<void> {
  const name = cookieName(deps);
  const token = getCookie(c, name);
  if (!token) return;
  const found = await findSession(deps.kv, token, deps.clock.now());
  if (!found) {
    // Ended (signed out elsewhere) or expired: the browser forgets it.
    deleteCookie(c, name, { path: "/", secure: secure(deps) });
    return;
  }
  c.set("account", found.account);
  c.set("session", { ...found.session, hash: found.hash });
  // A reviewer's or owner's session acts for the team, as their bearer token does on the
  // team's routes: http/guards.ts callerOf then makes the same Caller for pages and API.
  if (isTeam(found.account)) c.set("team", { via: "account", account: found.account });
}

export function startWebSession(
  deps: Deps,
  c: Context<AppEnv>,
  token: string,
  session: Session,
): void {
  setCookie(c, cookieName(deps), token, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(deps),
    maxAge: Math.max(1, Math.floor((session.expires - deps.clock.now()) / 1000)),
  });
}

export function forgetWebSession(deps: Deps, c: Context<AppEnv>): void {
  deleteCookie(c, cookieName(deps), { path: "/", secure: secure(deps) });
}

/**
 * Where the browser goes once the link it asks for is used: a short-lived cookie set when
 * the sign-in form is sent from a page that asked to come back (`?next=`), read once by the
 * link's "Sign in on this device". The link itself stays `/me?verify=<token>` (CONTRACT.md);
 * a link opened on another device lands on /me.
 */
const nextName = (deps: Deps) => secure(deps) ? "__Host-next" : "next";

export function rememberNext(deps: Deps, c: Context<AppEnv>, next: string, maxAgeMs: number) {
  if (next === "/me") return deleteCookie(c, nextName(deps), { path: "/", secure: secure(deps) });
  setCookie(c, nextName(deps), next, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(deps),
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

/** The page remembered by `rememberNext` (unchecked: pass it through safeNext), forgotten. */
export function takeNext(deps: Deps, c: Context<AppEnv>): string | undefined {
  const next = getCookie(c, nextName(deps));
  if (next !== undefined) deleteCookie(c, nextName(deps), { path: "/", secure: secure(deps) });
  return next;
}

/**
 * The token of the browser's live session (its cookie), or undefined: what is kept for that
 * session only (kv/accounts/flash.ts) is found and read with it.
 */
export function webToken(deps: Deps, c: Context<AppEnv>): string | undefined {
  return c.get("session") ? getCookie(c, cookieName(deps)) : undefined;
}
