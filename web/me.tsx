/**
 * The account page (/me). A first version: who is signed in and the way out. The pages under
 * /me (profile, journal, devices, services, files, ...) hang from here.
 */
import { standingOf } from "../kv/accounts/accounts.ts";
import type { Deps } from "../lib/deps.ts";
import { PostButton, UserText } from "./_layout.tsx";
import { ME_PAGES, MeNav, Purpose, STANDING_WORDS, standingName } from "./_me.tsx";
import { requireAccount, webRouter } from "./_web.tsx";

export function mePages(_deps: Deps) {
  const app = webRouter();

  app.get("/me", (c) => {
    const me = requireAccount(c);
    return c.render(
      <>
        <MeNav here="/me" viewer={me} />
        <h1>Your account</h1>
        <Purpose here="/me" />
        <dl>
          <dt>Name</dt>
          <dd>{me.name ? <UserText>{me.name}</UserText> : "not set yet"}</dd>
          <dt>Address</dt>
          <dd>
            <UserText>{me.email}</UserText>
          </dd>
          <dt>Standing</dt>
          <dd>
            {standingName(standingOf(me.roles))}: {STANDING_WORDS[standingOf(me.roles)] ?? ""}{" "}
            <a href="/me/standing">More about standing</a>
          </dd>
        </dl>
        {me.slug
          ? (
            <p>
              <a href={`/people/${me.slug}`}>Your public profile</a>
            </p>
          )
          : null}
        <h2>What you can do here</h2>
        <dl class="areas">
          {ME_PAGES.slice(1).map(([path, label, purpose]) => (
            <>
              <dt>
                <a href={path}>{label}</a>
              </dt>
              <dd>{purpose}</dd>
            </>
          ))}
        </dl>
        <PostButton action="/sign-out" block>Sign out</PostButton>
      </>,
      { title: "Your account", noindex: true },
    );
  });

  return app;
}
