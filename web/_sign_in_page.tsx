/**
 * The sign-in page (/sign-in): the form that asks for a mailed link (or, with `fresh=1`, a sign-in
 * afresh for a step that needs a recent one), the other ways in, its answer, and the page that
 * says the link is on its way (/sign-in/sent).
 */
import { z } from "zod";
import { LINK_LIFE } from "../kv/accounts/links.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { issueLink } from "../kv/accounts/sign_in.ts";
import { signInMail } from "../mail/sign_in.ts";
import type { Deps } from "../lib/deps.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { LinkRequest } from "../http/account_inputs.ts";
import { checked, emptyView, type FormView, nonBlank, submitForm } from "./_form.tsx";
import { Checkbox, ErrorSummary, Field } from "./_form_controls.tsx";
import { rememberNext } from "./_session.ts";
import { safeNext, seeOther, viewer, type WebCtx } from "./_web.tsx";
import { passkeyAssets } from "./_passkey_assets.ts";

/**
 * The API's link request. The age confirmation is asked once per account: ticked here, the link
 * carries it; left empty, the link's page asks it unless the account confirmed it before
 * (kv/accounts/accounts.ts `age_confirmed`). The API still takes `age_ok: true` with every login link request.
 */
const SignInRequest = LinkRequest.extend({ age_ok: z.boolean() });

export const AGE_LABEL = "I am old enough to have an account here";
const AGE_HINT = "Asked once for each account: if you confirmed it before, you may leave it empty.";

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

export function getSignIn(deps: Deps, c: WebCtx) {
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

export async function postSignIn(deps: Deps, c: WebCtx) {
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

export function getSignInSent(c: WebCtx) {
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
