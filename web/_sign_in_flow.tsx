/**
 * What the sign-ins through a provider and with a passkey share: the cookie that binds a flow
 * (kv/accounts/sign_in_flows.ts) to this browser, and the one page every failed sign-in ends on, saying
 * what happened in a plain sentence and offering the mailed link.
 */
import type { Context } from "hono";
import { endSession, type Session } from "../kv/accounts/sessions.ts";
import { type Flow, FLOW_LIFE, startFlow } from "../kv/accounts/sign_in_flows.ts";
import type { Deps } from "../lib/deps.ts";
import { DomainError } from "../lib/errors.ts";
import { type ProblemReason, SignInProblem } from "../lib/oauth.ts";
import type { AppEnv } from "../http/router.ts";
import { statusOf } from "../http/errors.ts";
import { forgetSiteCookie, readSiteCookie, setSiteCookie, startWebSession } from "./_session.ts";
import { waitInWords, type WebCtx } from "./_web.tsx";

/** Binds a flow to this browser (HttpOnly; Lax, so the provider's redirect back carries it). */
export function keepFlow(deps: Deps, c: Context<AppEnv>, cookie: string): void {
  setSiteCookie(deps, c, "flow", cookie, Math.floor(FLOW_LIFE / 1000));
}

/** This browser's flow cookie, forgotten (a flow is used once). */
export function flowCookie(deps: Deps, c: Context<AppEnv>): string {
  const value = readSiteCookie(deps, c, "flow") ?? "";
  if (value) forgetSiteCookie(deps, c, "flow");
  return value;
}

const STATUS: Record<ProblemReason, number> = {
  denied: 403,
  state: 400,
  expired: 410,
  down: 502,
  refused: 400,
  client: 502,
  unverified: 400,
  conflict: 409,
  taken: 409,
};

function sentenceOf(reason: ProblemReason, name: string, id: string): string {
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
    case "client":
      return `${name} refused this server's client id or secret, so nobody can sign in with it until the owner checks ${id.toUpperCase()}_CLIENT_ID and ${id.toUpperCase()}_CLIENT_SECRET.`;
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
          : null}
        <li>
          <a href="/sign-in">Mail me a sign-in link instead</a>
        </li>
      </ul>
    </>,
    { title: "Sign-in did not work", noindex: true },
  );
}

/**
 * A failure as its page; errors that are not the person's or the provider's go on up. `id`
 * names the provider's settings (`OIDC_CLIENT_SECRET`) when the provider refuses the client.
 */
export function answerProblem(
  c: WebCtx,
  err: unknown,
  name: string,
  linking: boolean,
  id = "",
) {
  if (err instanceof SignInProblem) {
    return problemPage(c, STATUS[err.reason], sentenceOf(err.reason, name, id), linking);
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
  // A refusal of the domain (a passkey that is not known, an answer that fails its checks).
  if (status >= 400 && status < 500 && err instanceof Error) {
    const text = err.message.charAt(0).toUpperCase() + err.message.slice(1);
    return problemPage(c, status, /[.!?]$/.test(text) ? text : `${text}.`, linking);
  }
  throw err;
}

/** A sign-in's new session in this browser, ending the one it had (a browser holds one). */
export async function enterSession(
  deps: Deps,
  c: WebCtx,
  done: { token: string; session: Session },
): Promise<void> {
  const before = c.get("session");
  const who = c.get("account");
  if (before && who) await endSession(deps.kv, who.id, before.id);
  startWebSession(deps, c, done.token, done.session);
}

/** WebAuthn options for a page's script (JSON), their challenge kept for this browser. */
export async function answerOptions(
  deps: Deps,
  c: WebCtx,
  options: { challenge: string },
  flow: Omit<Extract<Flow, { kind: "passkey" }>, "kind" | "challenge">,
): Promise<Response> {
  const cookie = await startFlow(deps.kv, {
    kind: "passkey",
    ...flow,
    challenge: options.challenge,
  }, deps.clock.now());
  keepFlow(deps, c, cookie);
  c.header("Cache-Control", "no-store");
  return c.json(options, 200);
}
