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
import { putFlash, readFlash } from "../kv/accounts/flash.ts";
import { findSession, type Session } from "../kv/accounts/sessions.ts";
import type { Deps } from "../lib/deps.ts";
import type { AppEnv } from "../http/router.ts";

const secure = (deps: Deps) => deps.config.baseUrl.startsWith("https:");

/** A cookie of the site's own is named `__Host-<base>` over https, `<base>` over http. */
const siteName = (deps: Deps, base: string) => secure(deps) ? `__Host-${base}` : base;

export function readSiteCookie(deps: Deps, c: Context<AppEnv>, base: string): string | undefined {
  return getCookie(c, siteName(deps, base));
}

/** Sets a cookie of the site's own: HttpOnly, SameSite=Lax, Path=/, Secure over https. */
export function setSiteCookie(
  deps: Deps,
  c: Context<AppEnv>,
  base: string,
  value: string,
  maxAgeSeconds: number,
): void {
  setCookie(c, siteName(deps, base), value, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(deps),
    maxAge: maxAgeSeconds,
  });
}

export function forgetSiteCookie(deps: Deps, c: Context<AppEnv>, base: string): void {
  deleteCookie(c, siteName(deps, base), { path: "/", secure: secure(deps) });
}

/** Puts the cookie's session and account on the context (as the bearer guards do), if live. */
export async function readWebSession(deps: Deps, c: Context<AppEnv>): Promise<void> {
  const token = readSiteCookie(deps, c, "session");
  if (!token) return;
  const found = await findSession(deps.kv, token, deps.clock.now());
  if (!found) {
    // Ended (signed out elsewhere) or expired: the browser forgets it.
    forgetSiteCookie(deps, c, "session");
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
  const maxAge = Math.max(1, Math.floor((session.expires - deps.clock.now()) / 1000));
  setSiteCookie(deps, c, "session", token, maxAge);
}

export function forgetWebSession(deps: Deps, c: Context<AppEnv>): void {
  forgetSiteCookie(deps, c, "session");
}

/**
 * Where the browser goes once the link it asks for is used: a short-lived cookie set when
 * the sign-in form is sent from a page that asked to come back (`?next=`), read once by the
 * link's "Sign in on this device". The link itself stays `/me?verify=<token>` (docs/api.md, "Web
 * pages (outside /api)");
 * a link opened on another device lands on /me.
 */
export function rememberNext(deps: Deps, c: Context<AppEnv>, next: string, maxAgeMs: number) {
  if (next === "/me") return forgetSiteCookie(deps, c, "next");
  setSiteCookie(deps, c, "next", next, Math.floor(maxAgeMs / 1000));
}

/** The page remembered by `rememberNext` (unchecked: pass it through safeNext), forgotten. */
export function takeNext(deps: Deps, c: Context<AppEnv>): string | undefined {
  const next = readSiteCookie(deps, c, "next");
  if (next !== undefined) forgetSiteCookie(deps, c, "next");
  return next;
}

/**
 * The token of the browser's live session (its cookie), or undefined: what is kept for that
 * session only (kv/accounts/flash.ts) is found and read with it.
 */
function webToken(deps: Deps, c: Context<AppEnv>): string | undefined {
  return c.get("session") ? readSiteCookie(deps, c, "session") : undefined;
}

/**
 * Keeps `value` under `name` for this session's page after the redirect (kv/accounts/flash.ts):
 * what a form's answer shows once. Without a live session there is no one to keep it for.
 */
export async function putSessionFlash(
  deps: Deps,
  c: Context<AppEnv>,
  name: string,
  value: unknown,
): Promise<void> {
  const token = webToken(deps, c);
  if (token) await putFlash(deps.kv, token, name, value, deps.clock.now());
}

/** What `putSessionFlash` kept under `name` for this session, or null. */
export async function readSessionFlash<T>(
  deps: Deps,
  c: Context<AppEnv>,
  name: string,
): Promise<T | null> {
  const token = webToken(deps, c);
  return token ? await readFlash<T>(deps.kv, token, name, deps.clock.now()) : null;
}
