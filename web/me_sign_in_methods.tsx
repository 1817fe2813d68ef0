/**
 * Sign-in methods (/me/sign-in-methods): the providers linked to the account (added, last
 * used, removable) and the configured ones to add (web/sign_in_providers.tsx); the passkeys
 * (named, last used, removable) and the form that adds one (POST /me/passkeys/options gives
 * the page's script its options, the form posts the browser's answer to /me/passkeys); and the
 * reminder that a mailed link to the account's address always signs in, so removing a method
 * never locks anyone out.
 */
import { z } from "zod";
import type { Account } from "../kv/accounts/accounts.ts";
import { identitiesOf, removeIdentity } from "../kv/accounts/identities.ts";
import {
  addPasskey,
  passkeysOf,
  registrationOptions,
  removePasskey,
} from "../kv/accounts/passkeys.ts";
import { takeFlow } from "../kv/accounts/sign_in_flows.ts";
import type { Deps } from "../lib/deps.ts";
import { invalid } from "../lib/errors.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { ErrorSummary, Field } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { MeNav, Purpose, when } from "./_me.tsx";
import { passkeyAssets } from "./_passkey_assets.ts";
import { answerOptions, flowCookie } from "./_sign_in_flow.tsx";
import { Table } from "./_table.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const PasskeyForm = z.object({
  name: z.string().trim().min(1, { error: "give the passkey a name" }).max(60, {
    error: "at most 60 characters",
  }),
  credential: z.string().max(20_000).default(""),
});

const LABELS = { name: "Passkey name", credential: "Passkey" };

/** A provider's name for people: the configured ones, else its id (a provider since removed). */
export function providerName(deps: Deps, id: string): string {
  if (id === "passkey") return "Passkey";
  return deps.config.providers.find((p) => p.id === id)?.name ?? id;
}

async function getSignInMethods(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return c.render(await methodsBody(deps, c, me, emptyView()), PAGE);
}

const PAGE = { title: "Sign-in methods", noindex: true, scripts: passkeyAssets() };

async function methodsBody(deps: Deps, c: WebCtx, me: Account, view: FormView) {
  const identities = await identitiesOf(deps.kv, me.id);
  const passkeys = await passkeysOf(deps.kv, me.id);
  const added = c.req.query("added");
  const removed = c.req.query("removed");
  return (
    <>
      <MeNav here="/me/sign-in-methods" />
      <h1>Sign-in methods</h1>
      <Purpose here="/me/sign-in-methods" />
      {added
        ? (
          <p class="notice" role="status">
            {added === "passkey" ? "Your new passkey" : providerName(deps, added)} now signs you in.
          </p>
        )
        : null}
      {removed ? <p class="notice" role="status">Removed.</p> : null}
      <p>
        A link mailed to{" "}
        <strong>
          <UserText>{me.email}</UserText>
        </strong>{" "}
        always signs you in, whatever you remove here.
      </p>
      <h2>Accounts elsewhere</h2>
      <Table
        caption="Accounts that sign you in"
        rows={identities}
        empty={<p>No account elsewhere signs you in yet.</p>}
        columns={[
          { label: "Provider", cell: (i) => providerName(deps, i.provider) },
          {
            label: "Address there",
            cell: (i) => i.email ? <UserText>{i.email}</UserText> : "none given",
          },
          { label: "Added", cell: (i) => when(i.created) },
          { label: "Last used", cell: (i) => when(i.last_used) },
          {
            label: "Action",
            cell: (i) => (
              <PostButton
                action={`/me/sign-in-methods/${i.provider}/${i.hash}/remove`}
                kind="secondary"
                confirm={`Stop signing in with this ${providerName(deps, i.provider)} account?`}
                label={`Remove ${providerName(deps, i.provider)}${i.email ? ` (${i.email})` : ""}`}
              >
                Remove
              </PostButton>
            ),
          },
        ]}
      />
      {deps.config.providers.length
        ? (
          <ul class="actions">
            {deps.config.providers.map((p) => (
              <li>
                <a class="button" href={`/me/sign-in-methods/add/${p.id}`}>Add {p.name}</a>
              </li>
            ))}
          </ul>
        )
        : <p class="hint">This site offers no other sign-in provider.</p>}
      <h2>Passkeys</h2>
      <p>
        A passkey signs you in on this site with your device's screen lock or a security key,
        without a mail.
      </p>
      <Table
        caption="Your passkeys"
        rows={passkeys}
        empty={<p>No passkey yet.</p>}
        columns={[
          { label: "Name", cell: (p) => <UserText>{p.name}</UserText> },
          { label: "Added", cell: (p) => when(p.created) },
          { label: "Last used", cell: (p) => when(p.last_used) },
          {
            label: "Action",
            cell: (p) => (
              <PostButton
                action={`/me/passkeys/${p.hash}/remove`}
                kind="secondary"
                confirm={`Remove the passkey ${p.name}?`}
                label={`Remove ${p.name}`}
              >
                Remove
              </PostButton>
            ),
          },
        ]}
      />
      <ErrorSummary view={view} labels={LABELS} />
      <form method="post" action="/me/passkeys" data-passkey="register" novalidate>
        <Field
          name="name"
          label={LABELS.name}
          hint="To tell your passkeys apart, such as Laptop or Phone."
          maxlength={60}
          required
          view={view}
        />
        <input type="hidden" name="credential" value="" />
        <button type="submit">Add a passkey</button>
        <p class="hint" role="status" data-passkey-status>
          {view.errors.credential ?? ""}
        </p>
      </form>
    </>
  );
}

/** Options for a new passkey (JSON for the page's script); the challenge kept for this browser. */
async function postPasskeyOptions(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const options = await registrationOptions(deps.kv, deps.config, me);
  return await answerOptions(deps, c, options, {
    purpose: "register",
    account: me.id,
    next: "/me/sign-in-methods",
  });
}

async function postPasskey(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: PasskeyForm,
    act: async ({ name, credential }) => {
      const flow = await takeFlow(deps.kv, flowCookie(deps, c), deps.clock.now());
      if (!credential) {
        invalid("this needs a browser that can make passkeys, with JavaScript on", "credential");
      }
      if (
        !flow || flow.kind !== "passkey" || flow.purpose !== "register" || flow.account !== me.id
      ) {
        invalid("this passkey took too long or was sent twice; add it again", "credential");
      }
      await addPasskey(
        deps.kv,
        deps.config,
        me.id,
        flow.challenge,
        credential,
        name,
        deps.clock.now(),
      );
      return "/me/sign-in-methods?added=passkey";
    },
    show: (view) => methodsBody(deps, c, me, view),
    page: PAGE,
  });
}

async function postRemovePasskey(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  await removePasskey(deps.kv, me.id, c.req.param("hash")!);
  return seeOther(c, "/me/sign-in-methods?removed=1");
}

async function postRemoveIdentity(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  await removeIdentity(deps.kv, me.id, c.req.param("provider")!, c.req.param("hash")!);
  return seeOther(c, "/me/sign-in-methods?removed=1");
}

export function signInMethodPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/sign-in-methods", (c) => getSignInMethods(deps, c));

  app.post(
    "/me/sign-in-methods/:provider{[a-z]{1,20}}/:hash{[0-9a-f]{40}}/remove",
    (c) => postRemoveIdentity(deps, c),
  );

  app.post("/me/passkeys/options", (c) => postPasskeyOptions(deps, c));

  app.post("/me/passkeys", (c) => postPasskey(deps, c));

  app.post("/me/passkeys/:hash{[0-9a-f]{40}}/remove", (c) => postRemovePasskey(deps, c));

  return app;
}
