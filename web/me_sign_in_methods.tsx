/**
 * Sign-in methods (/me/sign-in-methods): the providers linked to the account (added, last
 * used, removable), the configured providers not linked yet (added through
 * web/sign_in_providers.tsx), and the reminder that a mailed link to the account's address
 * always signs in, so removing a method never locks anyone out.
 */
import { identitiesOf, removeIdentity } from "../kv/identities.ts";
import type { Deps } from "../lib/deps.ts";
import { U } from "./_layout.tsx";
import { MeNav, Purpose, when } from "./_me.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";

/** A provider's name for people: the configured ones, else its id (a provider since removed). */
export function providerName(deps: Deps, id: string): string {
  if (id === "passkey") return "Passkey";
  return deps.config.providers.find((p) => p.id === id)?.name ?? id;
}

async function getSignInMethods(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const identities = await identitiesOf(deps.kv, me.id);
  const added = c.req.query("added");
  const removed = c.req.query("removed");
  return c.render(
    <>
      <MeNav here="/me/sign-in-methods" />
      <h1>Sign-in methods</h1>
      <Purpose here="/me/sign-in-methods" />
      {added
        ? <p class="notice" role="status">{providerName(deps, added)} now signs you in.</p>
        : null}
      {removed ? <p class="notice" role="status">Removed.</p> : null}
      <p>
        A link mailed to{" "}
        <strong>
          <U>{me.email}</U>
        </strong>{" "}
        always signs you in, whatever you remove here.
      </p>
      <h2>Accounts elsewhere</h2>
      {identities.length
        ? (
          <table>
            <caption>Accounts that sign you in</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Address there</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {identities.map((i) => (
                <tr>
                  <td>{providerName(deps, i.provider)}</td>
                  <td>{i.email ? <U>{i.email}</U> : "none given"}</td>
                  <td>{when(i.created)}</td>
                  <td>{when(i.last_used)}</td>
                  <td>
                    <form
                      method="post"
                      action={`/me/sign-in-methods/${i.provider}/${i.hash}/remove`}
                      class="inline"
                      data-confirm={`Stop signing in with this ${
                        providerName(deps, i.provider)
                      } account?`}
                    >
                      <button
                        type="submit"
                        class="secondary"
                        aria-label={`Remove ${providerName(deps, i.provider)}${
                          i.email ? ` (${i.email})` : ""
                        }`}
                      >
                        Remove
                      </button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
        : <p>No account elsewhere signs you in yet.</p>}
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
    </>,
    { title: "Sign-in methods", noindex: true },
  );
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

  return app;
}
