/**
 * Signing in with the browser: ask for a link (/sign-in), open it (/me?verify=<token>: shows
 * the address and one button, because mail scanners open links too and must not use them
 * up), complete it (POST /me/verify: the browser gets a device session in its cookie), and
 * sign out (POST /sign-out: ends that session). The same domain functions as the API's
 * GET /api/verify and DELETE /api/me/token.
 */
import { z } from "zod";
import { accountParts } from "../kv/parts/mod.ts";
import { type Account, findAccountByEmail } from "../kv/accounts/accounts.ts";
import { findLink, type Link, LINK_LIFE } from "../kv/accounts/links.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { proposalsOf } from "../kv/catalogue/proposals.ts";
import { endSession } from "../kv/accounts/sessions.ts";
import { completeLink, issueLink } from "../kv/accounts/sign_in.ts";
import { signInMail } from "../mail/sign_in.ts";
import type { Deps } from "../lib/deps.ts";
import { fail, statusOf } from "../http/errors.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { LinkRequest } from "../http/account_inputs.ts";
import {
  Checkbox,
  checked,
  emptyView,
  ErrorSummary,
  Field,
  type FormView,
  nonBlank,
  readForm,
  submitForm,
} from "./_form.tsx";
import { forgetWebSession, rememberNext, takeNext } from "./_session.ts";
import { type Next, safeNext, seeOther, viewer, type WebCtx, webRouter } from "./_web.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { passkeyAssets } from "./_passkey_assets.ts";
import { enterSession } from "./_sign_in_flow.tsx";

/**
 * The API's link request. The age confirmation is asked once per account: ticked here, the link
 * carries it; left empty, the link's page asks it unless the account confirmed it before
 * (kv/accounts/accounts.ts `age_confirmed`). The API still takes `age_ok: true` with every login link request.
 */
const SignInRequest = LinkRequest.extend({ age_ok: z.boolean() });

const AGE_LABEL = "I am old enough to have an account here";
const AGE_HINT = "Asked once for each account: if you confirmed it before, you may leave it empty.";

/** Whether the link's page must ask the age confirmation before signing in. */
const asksAge = (link: Link, account: Account | null) =>
  link.purpose === "login" && link.age_confirmed !== true && account?.age_confirmed === undefined;

const LABELS = {
  email: "E-mail address",
  age_ok: "Age confirmation",
  name: "Your name (new accounts)",
};

/**
 * The other ways in: a passkey (web/passkeys.tsx; the form shows once the page's script finds
 * passkey support) and the configured providers' buttons (web/sign_in_providers.tsx).
 */
function OtherWays(props: { providers: { id: string; name: string }[]; next: string }) {
  const next = props.next === "/me" ? "" : `?next=${encodeURIComponent(props.next)}`;
  return (
    <section aria-labelledby="other-ways">
      <h2 id="other-ways">Or sign in with</h2>
      <form method="post" action="/sign-in/passkey" data-passkey="sign-in" hidden>
        <input type="hidden" name="next" value={props.next} />
        <input type="hidden" name="credential" value="" />
        <button type="submit" class="secondary">Sign in with a passkey</button>
        <p class="hint" role="status" data-passkey-status></p>
      </form>
      {props.providers.length
        ? (
          <ul class="actions">
            {props.providers.map((p) => (
              <li>
                <a class="button secondary" href={`/sign-in/with/${p.id}${next}`}>
                  Sign in with {p.name}
                </a>
              </li>
            ))}
          </ul>
        )
        : null}
    </section>
  );
}

function SignInForm(
  props: {
    view: FormView;
    next: string;
    again?: boolean;
    providers: { id: string; name: string }[];
  },
) {
  return (
    <>
      <h1>{props.again ? "Sign in again" : "Sign in"}</h1>
      {props.again
        ? (
          <p>
            This step needs a sign-in from the last 15 minutes. We mail you a new link; open it in
            this browser and you come back here.
          </p>
        )
        : (
          <p>
            We mail you a link that signs you in; there is no password. A new address gets a new
            account.
          </p>
        )}
      <ErrorSummary view={props.view} labels={LABELS} />
      <form method="post" action="/sign-in" novalidate>
        <input type="hidden" name="next" value={props.next} />
        <Field
          name="email"
          type="email"
          label={LABELS.email}
          autocomplete="email webauthn"
          maxlength={320}
          required
          view={props.view}
        />
        {props.again ? null : (
          <Field
            name="name"
            label={LABELS.name}
            hint="For a new account: the name on your public profile (you can change it later). Leave it empty if you have an account."
            autocomplete="name"
            maxlength={120}
            view={props.view}
          />
        )}
        <Checkbox name="age_ok" label={AGE_LABEL} hint={AGE_HINT} view={props.view} />
        <button type="submit">Mail me a sign-in link</button>
      </form>
      <OtherWays providers={props.providers} next={props.next} />
    </>
  );
}

function getSignIn(deps: Deps, c: WebCtx) {
  const next = safeNext(c.req.query("next"));
  const me = viewer(c);
  // A signed-in browser comes here only to sign in afresh (`fresh=1`: erasure, name
  // choices need a recent sign-in); otherwise it goes on.
  const again = me !== undefined && c.req.query("fresh") === "1";
  if (me && !again) return seeOther(c, next);
  const view = emptyView(again ? { email: me?.email } : {});
  const form = (
    <SignInForm view={view} next={next} again={again} providers={deps.config.providers} />
  );
  return c.render(form, {
    scripts: passkeyAssets(),
    title: "Sign in",
    canonical: "/sign-in",
    description: "Sign in with a link mailed to you.",
  });
}

async function postSignIn(deps: Deps, c: WebCtx) {
  return await submitForm(c, {
    schema: SignInRequest,
    input: (f) => ({
      email: f.email ?? "",
      purpose: "login",
      age_ok: checked(f.age_ok),
      name: nonBlank(f.name),
    }),
    act: async ({ email, name, age_ok }, form) => {
      await limit(deps, RULES.linkByOrigin, clientOrigin(deps, c));
      await limit(deps, RULES.linkByAddress, email);
      // The same answer whether or not the box was needed: the link's page asks if it is.
      await issueLink(
        deps,
        { purpose: "login", email, name, ...(age_ok ? { age_confirmed: true as const } : {}) },
        signInMail("login"),
      );
      rememberNext(deps, c, safeNext(form.next), LINK_LIFE.login);
      return "/sign-in/sent";
    },
    limitField: "email",
    show: (view) => (
      <SignInForm
        view={view}
        next={safeNext(view.values.next)}
        providers={deps.config.providers}
      />
    ),
    page: { title: "Sign in", scripts: passkeyAssets() },
  });
}

function getSignInSent(c: WebCtx) {
  return c.render(
    <>
      <h1>Check your mail</h1>
      <p>
        If the address can receive mail, a sign-in link is on its way. Open it on the device you
        want to use; it works once, for 20 minutes.
      </p>
      <p>
        No mail after a few minutes? Look in the spam folder, or{" "}
        <a href="/sign-in">ask for a new link</a>.
      </p>
    </>,
    { title: "Check your mail", noindex: true },
  );
}

/** A used or old link opened by a browser that is signed in: say so, and where to go. */
function SignedInAlready(props: { email: string }) {
  return (
    <>
      <h1>You are signed in</h1>
      <p>
        This sign-in link was used already or is no longer valid, but this browser is signed in as
        {" "}
        <strong>
          <UserText>{props.email}</UserText>
        </strong>
        : there is nothing more to do.
      </p>
      <ul class="actions">
        <li>
          <a href="/me">Go to your account</a>
        </li>
        <li>
          <a href="/catalogue">Browse the catalogue</a>
        </li>
      </ul>
    </>
  );
}

/** A login link's page: who signs in, the age confirmation when still needed, the button. */
function SignInLink(
  props: { token: string; link: Link; replaces: boolean; askAge: boolean; view: FormView },
) {
  return (
    <>
      <h1>Sign in</h1>
      <ErrorSummary view={props.view} labels={{ age_ok: "Age confirmation" }} />
      <p>
        Sign in as{" "}
        <strong>
          <UserText>{props.link.email}</UserText>
        </strong>
        {props.replaces ? " (this replaces the session this browser has now)" : ""}.
      </p>
      <form method="post" action="/me/verify" novalidate>
        <input type="hidden" name="token" value={props.token} />
        {props.askAge
          ? (
            <Checkbox
              name="age_ok"
              label={AGE_LABEL}
              hint="Asked once for this account."
              view={props.view}
              required
            />
          )
          : null}
        <button type="submit">Sign in on this device</button>
      </form>
      <p class="hint">Not you? Close this page: nothing happens without the button.</p>
    </>
  );
}

async function getMe(deps: Deps, c: WebCtx, next: Next) {
  const token = c.req.query("verify");
  if (token === undefined) return await next();
  return await linkPage(deps, c, token, emptyView());
}

async function linkPage(deps: Deps, c: WebCtx, token: string, view: FormView) {
  c.header("Cache-Control", "no-store");
  const found = await findLink(deps.kv, token, deps.clock.now());
  const me = viewer(c);
  if (!found && me) {
    // Back after signing in, or the mail opened again: this browser is signed in already.
    return c.render(<SignedInAlready email={me.email} />, {
      title: "You are signed in",
      noindex: true,
    });
  }
  if (!found) {
    c.status(410);
    return c.render(
      <>
        <h1>This link does not work any more</h1>
        <p>
          A sign-in link works once and only for a short time; a newer link replaces an older one.
          {" "}
          <a href="/sign-in">Ask for a new link</a>.
        </p>
      </>,
      { title: "Link used or expired", noindex: true },
    );
  }
  const link = found.entry.value;
  if (link.purpose === "proposal") {
    return c.render(
      <>
        <h1>Confirm your proposal</h1>
        <p>
          Confirm the proposal sent from{" "}
          <strong>
            <UserText>{link.email}</UserText>
          </strong>
          : the team is told and starts looking at it. This also signs this browser in, with a new
          account for the address if it has none (the module is published under it).
          {viewer(c) ? " It replaces the session this browser has now." : ""}
        </p>
        <PostButton action="/me/verify" fields={{ token }} block>Confirm my proposal</PostButton>
        <p class="hint">Not you? Close this page: nothing happens without the button.</p>
      </>,
      { title: "Confirm your proposal", noindex: true },
    );
  }
  const account = (await findAccountByEmail(deps.kv, link.email))?.value ?? null;
  return c.render(
    <SignInLink
      token={token}
      link={link}
      replaces={viewer(c) !== undefined}
      askAge={asksAge(link, account)}
      view={view}
    />,
    { title: "Sign in", noindex: true },
  );
}

async function postMeVerify(deps: Deps, c: WebCtx) {
  const form = await readForm(c);
  const token = typeof form.token === "string" ? form.token : "";
  if (!token || token.length > 200) fail(400, "the link is incomplete; open it from your mail");
  const me = viewer(c);
  // A login link that still needs the age confirmation is not used without the box ticked.
  const ageOk = checked(form.age_ok);
  const found = await findLink(deps.kv, token, deps.clock.now());
  if (found && !ageOk) {
    const link = found.entry.value;
    const account = (await findAccountByEmail(deps.kv, link.email))?.value ?? null;
    if (asksAge(link, account)) {
      c.status(400);
      return await linkPage(deps, c, token, {
        values: {},
        errors: { age_ok: "Please confirm this to sign in." },
      });
    }
  }
  const done = await completeLink(deps, token, {
    address: clientOrigin(deps, c),
    agent: c.req.header("user-agent") ?? "",
  }, ageOk).catch((err) => {
    // The link was used meanwhile (the button pressed twice, Back and again): a browser that
    // is signed in goes on to the page that says so.
    if (me && statusOf(err) === 410) return null;
    throw err;
  });
  if (!done) return seeOther(c, `/me?verify=${encodeURIComponent(token)}`);
  // Any link confirms the address's proposals still waiting (CONTRACT.md): those are named on
  // the page the person lands on.
  const waiting = (await proposalsOf(deps.kv, done.account.email))
    .filter((p) => p.status === "received").map((p) => p.id);
  let confirmed = 0;
  for (const part of accountParts) {
    confirmed += (await part.afterVerify?.(deps, done.account, done.link))?.confirmed ?? 0;
  }
  await enterSession(deps, c, done);
  const next = safeNext(takeNext(deps, c));
  if (confirmed > 0 && waiting.length) {
    const made = done.created ? "&account=new" : "";
    return seeOther(c, `/contribute/confirmed?ids=${waiting.join(",")}${made}`);
  }
  return seeOther(c, next);
}

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
  app.get("/me", (c, next) => getMe(deps, c, next));

  app.post("/me/verify", (c) => postMeVerify(deps, c));

  app.post("/sign-out", (c) => postSignOut(deps, c));

  return app;
}
