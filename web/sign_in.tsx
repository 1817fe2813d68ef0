/**
 * Signing in with the browser: ask for a link (/sign-in), open it (/me?verify=<token>: shows
 * the address and one button, because mail scanners open links too and must not use them
 * up), complete it (POST /me/verify: the browser gets a device session in its cookie), and
 * sign out (POST /sign-out: ends that session). The same domain functions as the API's
 * GET /api/verify and DELETE /api/me/token.
 * This file holds the routes; the sign-in form and its answer are web/_sign_in_page.tsx, a
 * mailed link's page and its answer web/_sign_in_link_page.tsx.
 */
import { endSession } from "../kv/accounts/sessions.ts";
import type { Deps } from "../lib/deps.ts";
import { forgetWebSession } from "./_session.ts";
import { seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { getSignIn, getSignInSent, postSignIn } from "./_sign_in_page.tsx";
import { getMeVerify, postMeVerify } from "./_sign_in_link_page.tsx";

async function postSignOut(deps: Deps, c: WebCtx) {
  const s = c.get("session");
  const a = c.get("account");
  if (s && a) await endSession(deps.kv, a.id, s.id);
  forgetWebSession(deps, c);
  return seeOther(c, "/?signed-out=1");
}

export function signInPages(deps: Deps) {
  const app = webRouter();

  app.get("/sign-in", (c) => getSignIn(deps, c));

  app.post("/sign-in", (c) => postSignIn(deps, c));

  app.get("/sign-in/sent", (c) => getSignInSent(c));

  // The mailed link. Only shows: a GET (a mail scanner, a prefetch) never uses the link up.
  // Without ?verify this is the account page (web/me.tsx).
  app.get("/me", (c, next) => getMeVerify(deps, c, next));

  app.post("/me/verify", (c) => postMeVerify(deps, c));

  app.post("/sign-out", (c) => postSignOut(deps, c));

  return app;
}
