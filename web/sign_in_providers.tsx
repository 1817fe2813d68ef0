/**
 * Signing in through a provider (GitHub, GitLab, Google, Microsoft, the owner's OpenID
 * provider): `/sign-in/with/<provider>` remembers the flow for this browser (kv/sign_in_flows.ts,
 * a cookie) and sends it to the provider; the provider sends it back to
 * `/sign-in/callback/<provider>` (the redirect URI, registered at the provider exactly as
 * `{BASE_URL}/sign-in/callback/<provider>`), which uses the flow up, checks the answer
 * (lib/oauth.ts) and opens the same device session as a mailed link. A signed-in person links a
 * provider through `/me/sign-in-methods/add/<provider>`, which comes back the same way.
 *
 * Starting is a GET: a form's redirect to another site would break the `form-action 'self'`
 * policy, and a start alone changes nothing (the flow is bound to the browser that started it).
 * Every failure ends on one page saying what happened and offering the mailed link.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { RULES } from "../kv/rate_limit.ts";
import { endSession } from "../kv/sessions.ts";
import { completeProviderSignIn, linkProvider } from "../kv/sign_in.ts";
import { FLOW_LIFE, startFlow, takeFlow } from "../kv/sign_in_flows.ts";
import type { ProviderConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import {
  authorizationUrl,
  finishAuthorization,
  newAuthRequest,
  type ProblemReason,
  SignInProblem,
} from "../lib/oauth.ts";
import { DomainError } from "../lib/errors.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import type { AppEnv } from "../http/router.ts";
import { statusOf } from "../http/errors.ts";
import { startWebSession } from "./_session.ts";
import {
  requireAccount,
  safeNext,
  seeOther,
  viewer,
  waitInWords,
  type WebCtx,
  webRouter,
} from "./_web.tsx";

const secure = (deps: Deps) => deps.config.baseUrl.startsWith("https:");
const flowName = (deps: Deps) => secure(deps) ? "__Host-flow" : "flow";

/** Binds a flow to this browser (HttpOnly; Lax, so the provider's redirect back carries it). */
export function keepFlow(deps: Deps, c: Context<AppEnv>, cookie: string): void {
  setCookie(c, flowName(deps), cookie, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(deps),
    maxAge: Math.floor(FLOW_LIFE / 1000),
  });
}

/** This browser's flow cookie, forgotten (a flow is used once). */
export function flowCookie(deps: Deps, c: Context<AppEnv>): string {
  const value = getCookie(c, flowName(deps)) ?? "";
  if (value) deleteCookie(c, flowName(deps), { path: "/", secure: secure(deps) });
  return value;
}

/** The redirect URI of a provider: exactly what the owner registers there. */
export const redirectUri = (deps: Deps, p: ProviderConfig) =>
  `${deps.config.baseUrl}/sign-in/callback/${p.id}`;

function providerOf(deps: Deps, c: WebCtx): ProviderConfig | null {
  const id = c.req.param("provider");
  return deps.config.providers.find((p) => p.id === id) ?? null;
}

const STATUS: Record<ProblemReason, number> = {
  denied: 403,
  state: 400,
  expired: 410,
  down: 502,
  refused: 400,
  unverified: 400,
  conflict: 409,
  taken: 409,
};

function sentenceOf(reason: ProblemReason, name: string): string {
  switch (reason) {
    case "denied":
      return `You declined at ${name}, so you are not signed in with it.`;
    case "state":
      return `This answer from ${name} does not belong to a sign-in started in this browser, so it was not used.`;
    case "expired":
      return `This sign-in was finished already or took longer than ${
        waitInWords(FLOW_LIFE / 1000)
      }, so it cannot be used again. Start again from the sign-in page.`;
    case "down":
      return `${name} did not answer, or answered with an error. Try again in a few minutes.`;
    case "refused":
      return `${name} did not confirm who you are, so you are not signed in.`;
    case "unverified":
      return `${name} has not verified an e-mail address of yours, so no account here can be opened with it. Verify your address at ${name}, or sign in with a mailed link.`;
    case "conflict":
      return `An account here already uses the address ${name} gave, but ${name} has not verified that address, so it cannot open that account. Sign in with a mailed link, then add ${name} on your sign-in methods page.`;
    case "taken":
      return `This ${name} account already signs in to another account here. Remove it there first, or add another ${name} account.`;
  }
}

/** The one page every failed provider sign-in ends on: what happened, and the way in by mail. */
function problemPage(
  c: WebCtx,
  status: number,
  message: string,
  linking: boolean,
  retryAfter?: number,
) {
  c.status(status as 400);
  c.header("Cache-Control", "no-store");
  if (retryAfter !== undefined) c.header("Retry-After", String(retryAfter));
  return c.render(
    <>
      <h1>Sign-in did not work</h1>
      <p>{message}</p>
      {retryAfter !== undefined ? <p>You can try again in {waitInWords(retryAfter)}.</p> : null}
      <ul class="actions">
        {linking
          ? (
            <li>
              <a href="/me/sign-in-methods">Back to your sign-in methods</a>
            </li>
          )
          : (
            <>
              <li>
                <a href="/sign-in">Mail me a sign-in link instead</a>
              </li>
              <li>
                <a href="/sign-in">Start again</a>
              </li>
            </>
          )}
      </ul>
    </>,
    { title: "Sign-in did not work", noindex: true },
  );
}

/** A failure as its page; errors that are not the person's or the provider's go on up. */
function answerProblem(c: WebCtx, err: unknown, name: string, linking: boolean) {
  if (err instanceof SignInProblem) {
    return problemPage(c, STATUS[err.reason], sentenceOf(err.reason, name), linking);
  }
  const status = statusOf(err);
  if (status === 429) {
    const retry = err instanceof DomainError
      ? err.retryAfter
      : Number((err as { headers?: Record<string, string> }).headers?.["Retry-After"]);
    return problemPage(
      c,
      429,
      "There were too many sign-ins from here or to this address in the last hour.",
      linking,
      Number.isFinite(retry) ? retry : 3600,
    );
  }
  throw err;
}

async function startProvider(deps: Deps, c: WebCtx, linking: boolean) {
  const p = providerOf(deps, c);
  if (!p) return c.notFound();
  const me = linking ? requireAccount(c) : viewer(c);
  try {
    await limit(deps, RULES.providerByOrigin, clientOrigin(deps, c));
    const req = newAuthRequest();
    const url = await authorizationUrl(p, redirectUri(deps, p), req);
    const next = linking ? "/me/sign-in-methods" : safeNext(c.req.query("next"));
    const cookie = await startFlow(deps.kv, {
      kind: "provider",
      provider: p.id,
      ...req,
      next,
      ...(linking && me ? { account: me.id } : {}),
    }, deps.clock.now());
    keepFlow(deps, c, cookie);
    c.header("Cache-Control", "no-store");
    return c.redirect(url, 303);
  } catch (err) {
    return answerProblem(c, err, p.name, linking);
  }
}

async function getCallback(deps: Deps, c: WebCtx) {
  const p = providerOf(deps, c);
  if (!p) return c.notFound();
  c.header("Cache-Control", "no-store");
  const flow = await takeFlow(deps.kv, flowCookie(deps, c), deps.clock.now());
  const linking = flow?.kind === "provider" && flow.account !== undefined;
  try {
    if (!flow || flow.kind !== "provider") throw new SignInProblem("expired");
    if (flow.provider !== p.id) throw new SignInProblem("state");
    // The provider's answer, read against our own redirect URI (never the request's host).
    const back = new URL(redirectUri(deps, p));
    back.search = new URL(c.req.url).search;
    const profile = await finishAuthorization(p, redirectUri(deps, p), back, flow);
    if (flow.account !== undefined) {
      const me = viewer(c);
      // Linking ends in the browser of the account that started it, still signed in.
      if (!me || me.id !== flow.account) throw new SignInProblem("state");
      await linkProvider(deps, me.id, p.id, profile);
      return seeOther(c, `/me/sign-in-methods?added=${p.id}`);
    }
    await limit(deps, RULES.providerByAddress, profile.email ?? `${p.id}:${profile.subject}`);
    const done = await completeProviderSignIn(deps, p.id, profile, {
      address: clientOrigin(deps, c),
      agent: c.req.header("user-agent") ?? "",
    });
    // A browser holds one session: the one it had before ends with the new sign-in.
    const before = c.get("session");
    const who = c.get("account");
    if (before && who) await endSession(deps.kv, who.id, before.id);
    startWebSession(deps, c, done.token, done.session);
    return seeOther(c, safeNext(flow.next));
  } catch (err) {
    return answerProblem(c, err, p.name, linking);
  }
}

export function providerPages(deps: Deps) {
  const app = webRouter();

  app.get("/sign-in/with/:provider{[a-z]{1,20}}", (c) => startProvider(deps, c, false));

  app.get("/sign-in/callback/:provider{[a-z]{1,20}}", (c) => getCallback(deps, c));

  app.get("/me/sign-in-methods/add/:provider{[a-z]{1,20}}", (c) => startProvider(deps, c, true));

  return app;
}
