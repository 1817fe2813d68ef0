/**
 * Signing in with a passkey from the sign-in page: the page's script asks for options
 * (POST /sign-in/passkey/options, JSON: a challenge kept for this browser in a flow,
 * kv/accounts/sign_in_flows.ts), the browser signs it, and the form posts the answer
 * (POST /sign-in/passkey), which opens the same device session as a mailed link and answers
 * 303. A failure ends on the page every failed sign-in ends on, with the mailed link.
 */
import { RULES } from "../kv/store/rate_limit.ts";
import { authenticationOptions } from "../kv/accounts/passkeys.ts";
import { completePasskeySignIn } from "../kv/accounts/sign_in.ts";
import { takeFlow } from "../kv/accounts/sign_in_flows.ts";
import type { Deps } from "../lib/deps.ts";
import { SignInProblem } from "../lib/oauth.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { readForm } from "./_form.tsx";
import { answerOptions, answerProblem, enterSession, flowCookie } from "./_sign_in_flow.tsx";
import { safeNext, seeOther, type WebCtx, webRouter } from "./_web.tsx";

async function postOptions(deps: Deps, c: WebCtx) {
  await limit(deps, RULES.passkeyOptions, clientOrigin(deps, c));
  const options = await authenticationOptions(deps.config);
  return await answerOptions(deps, c, options, { purpose: "sign-in", next: "/me" });
}

async function postPasskeySignIn(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  const form = await readForm(c);
  const credential = typeof form.credential === "string" ? form.credential : "";
  const flow = await takeFlow(deps.kv, flowCookie(deps, c), deps.clock.now());
  try {
    if (!credential) {
      throw new SignInProblem("refused", "no passkey answer came with the form");
    }
    if (!flow || flow.kind !== "passkey" || flow.purpose !== "sign-in") {
      throw new SignInProblem("expired");
    }
    await limit(deps, RULES.passkeyByOrigin, clientOrigin(deps, c));
    const done = await completePasskeySignIn(deps, flow.challenge, credential, {
      address: clientOrigin(deps, c),
      agent: c.req.header("user-agent") ?? "",
    });
    await enterSession(deps, c, done);
    return seeOther(c, safeNext(typeof form.next === "string" ? form.next : "/me"));
  } catch (err) {
    return answerProblem(c, err, "Your passkey", false);
  }
}

export function passkeySignInPages(deps: Deps) {
  const app = webRouter();

  app.post("/sign-in/passkey/options", (c) => postOptions(deps, c));

  app.post("/sign-in/passkey", (c) => postPasskeySignIn(deps, c));

  return app;
}
