/**
 * A mailed link's page (/me?verify=<token>): it shows the address and one button, because mail
 * scanners open links too and must not use them up; a login link asks the age confirmation when
 * still needed. Its answer (POST /me/verify) completes the link: the browser gets a device
 * session in its cookie and goes on, to the proposals it confirmed if any.
 */
import { afterLinkOpened } from "../kv/parts/after_link.ts";
import { type Account, findAccountByEmail } from "../kv/accounts/accounts.ts";
import { findLink, type Link } from "../kv/accounts/links.ts";
import { proposalsOf } from "../kv/catalogue/proposals.ts";
import { completeLink } from "../kv/accounts/sign_in.ts";
import type { Deps } from "../lib/deps.ts";
import { fail, statusOf } from "../http/errors.ts";
import { clientOrigin } from "../http/guards.ts";
import { checked, emptyView, type FormView, readForm } from "./_form.tsx";
import { Checkbox, ErrorSummary } from "./_form_controls.tsx";
import { takeNext } from "./_session.ts";
import { type Next, safeNext, seeOther, viewer, type WebCtx } from "./_web.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { enterSession } from "./_sign_in_flow.tsx";
import { AGE_LABEL } from "./_sign_in_page.tsx";

/** Whether the link's page must ask the age confirmation before signing in. */
const asksAge = (link: Link, account: Account | null) =>
  link.purpose === "login" && link.age_confirmed !== true && account?.age_confirmed === undefined;

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

export async function getMeVerify(deps: Deps, c: WebCtx, next: Next) {
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

export async function postMeVerify(deps: Deps, c: WebCtx) {
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
  // Any link confirms the address's proposals still waiting (docs/api.md, "Proposals"): those
  // are named on the page the person lands on.
  const waiting = (await proposalsOf(deps.kv, done.account.email))
    .filter((p) => p.status === "received").map((p) => p.id);
  const { confirmed } = await afterLinkOpened(deps, done.account, done.link);
  await enterSession(deps, c, done);
  const next = safeNext(takeNext(deps, c));
  if (confirmed > 0 && waiting.length) {
    const made = done.created ? "&account=new" : "";
    return seeOther(c, `/contribute/confirmed?ids=${waiting.join(",")}${made}`);
  }
  return seeOther(c, next);
}
