/**
 * Signing in through a provider (GitHub, GitLab, Google, Microsoft, the owner's OpenID
 * provider): `/sign-in/with/<provider>` remembers the flow for this browser (kv/accounts/sign_in_flows.ts,
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
import { RULES } from "../kv/store/rate_limit.ts";
import { completeProviderSignIn, linkProvider } from "../kv/accounts/sign_in.ts";
import { startFlow, takeFlow } from "../kv/accounts/sign_in_flows.ts";
import type { ProviderConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import {
  authorizationUrl,
  finishAuthorization,
  newAuthRequest,
  SignInProblem,
} from "../lib/oauth.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { answerProblem, enterSession, flowCookie, keepFlow } from "./_sign_in_flow.tsx";
import { requireAccount, safeNext, seeOther, viewer, type WebCtx, webRouter } from "./_web.tsx";

/** The redirect URI of a provider: exactly what the owner registers there. */
export const redirectUri = (deps: Deps, p: ProviderConfig) =>
  `${deps.config.baseUrl}/sign-in/callback/${p.id}`;

function providerOf(deps: Deps, c: WebCtx): ProviderConfig | null {
  const id = c.req.param("provider");
  return deps.config.providers.find((p) => p.id === id) ?? null;
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
    return answerProblem(c, err, p.name, linking, p.id);
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
    await enterSession(deps, c, done);
    return seeOther(c, safeNext(flow.next));
  } catch (err) {
    return answerProblem(c, err, p.name, linking, p.id);
  }
}

export function providerPages(deps: Deps) {
  const app = webRouter();

  app.get("/sign-in/with/:provider{[a-z]{1,20}}", (c) => startProvider(deps, c, false));

  app.get("/sign-in/callback/:provider{[a-z]{1,20}}", (c) => getCallback(deps, c));

  app.get("/me/sign-in-methods/add/:provider{[a-z]{1,20}}", (c) => startProvider(deps, c, true));

  return app;
}
