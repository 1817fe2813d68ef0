/**
 * The page a pressed confirmation link lands on (/contribute/confirmed).
 */
import { proposalsOf } from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { UserText } from "./_layout.tsx";
import { viewer, type WebCtx } from "./_web.tsx";

/**
 * Where a confirmation link lands once pressed (web/_sign_in_link_page.tsx): the proposals it confirmed,
 * by title, for the signed-in submitter only, and whether the link made their account.
 */
export async function getContributeConfirmed(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  const me = viewer(c);
  const ids = new Set(
    (c.req.query("ids") ?? "").split(",").filter((s) => /^[1-9][0-9]{0,15}$/.test(s)).map(Number),
  );
  const mine = me ? (await proposalsOf(deps.kv, me.email)).filter((p) => ids.has(p.id)) : [];
  if (!me || mine.length === 0) {
    fail(404, "Nothing to show here: open the link from your mail again, or sign in.");
  }
  const made = c.req.query("account") === "new";
  return c.render(
    <>
      <h1>{mine.length === 1 ? "Your proposal is confirmed" : "Your proposals are confirmed"}</h1>
      {mine.map((p) => (
        <p class="notice" role="status">
          Your proposal ‘<UserText>{p.title}</UserText>’ is confirmed; the team has been told.{" "}
          <a href={`/contribute/status?id=${p.id}`}>Its status page</a>
        </p>
      ))}
      {made
        ? (
          <p>
            Confirming it made an account for{" "}
            <strong>
              <UserText>{me.email}</UserText>
            </strong>, and this browser is signed in to it: the module will be published under it,
            and <a href="/me/work">Your work</a>{" "}
            shows your proposals. There is no password: next time, ask for a sign-in link.
          </p>
        )
        : (
          <p>
            You are signed in as{" "}
            <strong>
              <UserText>{me.email}</UserText>
            </strong>; <a href="/me/work">Your work</a> shows your proposals.
          </p>
        )}
      <ul class="actions">
        <li>
          <a href="/catalogue">Browse the catalogue</a>
        </li>
      </ul>
    </>,
    { title: "Proposal confirmed", noindex: true },
  );
}
