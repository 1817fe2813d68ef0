/**
 * Standing and invitations (/me/standing): apply for contributor standing and see the
 * outcome (kv/accounts/applications.ts, as POST /api/me/apply and GET /api/me), invite an address
 * and list the invitations sent (kv/accounts/invites.ts inviteAddress, as /api/me/invites).
 */
import { standingOf } from "../kv/accounts/accounts.ts";
import { type Application, applyFor, latestApplication } from "../kv/accounts/applications.ts";
import { inviteAddress, invitesBy } from "../kv/accounts/invites.ts";
import { ownerClaimValid } from "../kv/accounts/owner_claim.ts";
import { claimOwnership } from "../kv/accounts/roles.ts";
import type { Deps } from "../lib/deps.ts";
import { ApplyBody, InviteBody, OwnerClaimBody } from "../http/account_inputs.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { ErrorSummary, Field, TextArea } from "./_form_controls.tsx";
import { InviteTable } from "./_invites.tsx";
import { UserText } from "./_layout.tsx";
import { MeNav, Purpose, STANDING_WORDS, standingName, when } from "./_me.tsx";
import { requireAccount, type WebCtx, webRouter } from "./_web.tsx";

const page = async (deps: Deps, c: WebCtx, apply: FormView, invite: FormView) => {
  const me = requireAccount(c);
  const [latest, invites] = await Promise.all([
    latestApplication(deps.kv, me),
    invitesBy(deps.kv, me.id),
  ]);
  const now = deps.clock.now();
  const standing = standingOf(me.roles);
  return (
    <>
      <MeNav here="/me/standing" viewer={me} />
      <h1>Standing and invitations</h1>
      <Purpose here="/me/standing" />
      {c.req.query("sent") ? <p class="notice" role="status">Done.</p> : null}
      {c.req.query("owner")
        ? (
          <p class="notice" role="status">
            You are now this server's owner: you can publish modules and watch addresses on the
            server's own network. Roles are given with a command on the server machine; the team's
            {" "}
            <a href="/team/accounts">Accounts and roles</a> page lists each account's.
          </p>
        )
        : null}
      <p>
        Your standing: <strong>{standingName(standing)}</strong>: {STANDING_WORDS[standing] ?? ""}
      </p>
      <StandingsExplained />
      <h2>Contributor standing</h2>
      <LatestApplication latest={latest} />
      {standing !== "collector"
        ? <p>You have it already{standing === "contributor" ? "" : `, as ${standing}`}.</p>
        : latest?.outcome === null
        ? null
        : <ApplyForm view={apply} />}
      <h2>Invite someone</h2>
      <InviteForm view={invite} />
      <h2>Invitations sent</h2>
      <InviteTable
        caption="Your invitations, newest first"
        invites={invites}
        now={now}
        empty="None yet."
      />
    </>
  );
};

/** What became of the account's latest application for contributor standing. */
function LatestApplication({ latest }: { latest: Application | null }) {
  return latest
    ? (
      <p>
        Your application of {when(latest.created)}:{" "}
        {latest.outcome === null ? <strong>waiting for the team</strong> : (
          <>
            <strong>{latest.outcome}</strong> on {when(latest.decided)}
            {latest.reason
              ? (
                <>
                  {" "}— reason: <UserText>{latest.reason}</UserText>
                </>
              )
              : null}
          </>
        )}
      </p>
    )
    : null;
}

/** The standings and what each lets a person do. */
function StandingsExplained() {
  return (
    <details>
      <summary>What the standings are</summary>
      <dl>
        {Object.entries(STANDING_WORDS).map(([name, words]) => (
          <>
            <dt>{standingName(name)}</dt>
            <dd>{words.charAt(0).toUpperCase() + words.slice(1)}</dd>
          </>
        ))}
      </dl>
      <p>
        Your standing follows from your account's roles: contributor through an application the team
        approves; reviewer and owner only from the owner's command on the server machine.
      </p>
    </details>
  );
}

function ApplyForm({ view: apply }: { view: FormView }) {
  return (
    <form method="post" action="/me/standing/apply" novalidate>
      <ErrorSummary view={apply} labels={{ text: "Why you apply" }} />
      <TextArea
        name="text"
        label="Why you apply"
        hint="At least 20 characters: what you would contribute."
        view={apply}
        maxlength={2000}
        required
      />
      <button type="submit">Apply for contributor standing</button>
    </form>
  );
}

function InviteForm({ view: invite }: { view: FormView }) {
  return (
    <form method="post" action="/me/standing/invite" novalidate>
      <ErrorSummary
        view={invite}
        labels={{ email: "Their address", message: "Message", name: "Name" }}
      />
      <Field
        name="email"
        type="email"
        label="Their address"
        view={invite}
        maxlength={320}
        required
      />
      <TextArea
        name="message"
        label="Message (optional)"
        view={invite}
        rows={3}
        maxlength={500}
      />
      {invite.errors.name
        ? (
          <p class="error">
            Set a name on your <a href="/me/profile">profile</a> first.
          </p>
        )
        : null}
      <button type="submit">Send invitation</button>
    </form>
  );
}

async function postMeStandingApply(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: ApplyBody,
    act: async ({ text }) => {
      await applyFor(deps.kv, me.id, text, deps.clock.now());
      return "/me/standing?sent=1";
    },
    show: (view) => page(deps, c, view, emptyView()),
    page: { title: "Standing and invitations" },
  });
}

async function postMeStandingInvite(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: InviteBody,
    act: async (input) => {
      await inviteAddress(deps, me, input);
      return "/me/standing?sent=1";
    },
    show: (view) => page(deps, c, emptyView(), view),
    page: { title: "Standing and invitations" },
  });
}

/**
 * The first-run link's page: the signed-in person confirms that they become the owner. A link
 * that no longer works says why and how to get a new one, not a bare error.
 */
async function ownerClaimPage(deps: Deps, c: WebCtx, view: FormView) {
  const me = requireAccount(c);
  const token = view.values.claim ?? "";
  const valid = await ownerClaimValid(deps.kv, token, deps.clock.now());
  return (
    <>
      <h1>Become this server's owner</h1>
      {valid
        ? (
          <form method="post" action="/me/standing/owner" novalidate>
            <ErrorSummary view={view} labels={{ claim: "The link" }} />
            <p>
              The server printed this link at its start for the person who runs it. As the owner,
              your account <UserText>{me.email}</UserText>{" "}
              can watch addresses on the server's own network, sees the team's pages and publishes
              modules. Roles are given with a command on the server machine (<code>
                deno task roles
              </code>), never through this site.
            </p>
            <input type="hidden" name="claim" value={token} />
            <button type="submit">Become the owner</button>
          </form>
        )
        : (
          <>
            <p>
              This link no longer works: it was used, it is older than 24 hours, or the server was
              restarted and printed a newer one.
            </p>
            <p>
              A server without an owner prints a new link each time it starts. On the server's
              machine the owner can also be named with{" "}
              <code>deno task roles grant &lt;address&gt; owner</code>.
            </p>
            <p>
              <a href="/me/standing">Back to your standing</a>
            </p>
          </>
        )}
    </>
  );
}

async function postOwnerClaim(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await submitForm(c, {
    schema: OwnerClaimBody,
    act: async ({ claim }) => {
      await claimOwnership(deps.kv, me.id, claim, deps.clock.now());
      return "/me/standing?owner=1";
    },
    show: (view) => ownerClaimPage(deps, c, view),
    page: { title: "Become this server's owner" },
  });
}

export function standingPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/standing", async (c) =>
    c.render(await page(deps, c, emptyView(), emptyView()), {
      title: "Standing and invitations",
      noindex: true,
    }));

  app.get("/me/standing/owner", async (c) =>
    c.render(
      await ownerClaimPage(deps, c, { values: { claim: c.req.query("claim") ?? "" }, errors: {} }),
      { title: "Become this server's owner", noindex: true },
    ));

  app.post("/me/standing/owner", (c) => postOwnerClaim(deps, c));

  app.post("/me/standing/apply", (c) => postMeStandingApply(deps, c));

  app.post("/me/standing/invite", (c) => postMeStandingInvite(deps, c));

  return app;
}
