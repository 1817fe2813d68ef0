/**
 * The team's requests page (/team/requests): what visitors asked through the forms, marked handled.
 */
import { listRequests, setHandled } from "../kv/forms/requests.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { readForm } from "./_form.tsx";
import { AfterDot, PostButton, UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { requireTeamPage, routeId, seeOther, type WebCtx } from "./_web.tsx";
import { renderTeamPage } from "./_team.tsx";

export async function getTeamRequests(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const all = c.req.query("all") === "1";
  const list = await listRequests(deps.kv, all);
  return renderTeamPage(
    c,
    "/team/requests",
    "Requests",
    <>
      <p>
        {all
          ? <a href="/team/requests">Open ones only</a>
          : <a href="/team/requests?all=1">Show handled ones too</a>}
      </p>
      {list.length === 0 ? <p>No open requests.</p> : null}
      {list.map((r) => (
        <section aria-labelledby={`req-${r.id}`}>
          <h2 id={`req-${r.id}`}>
            #{r.id} {r.kind} from <UserText>{r.name}</UserText>
          </h2>
          <p class="meta">
            <UserText>{r.email}</UserText>
            <AfterDot text={r.org} /> · {when(r.created)}
            {r.module
              ? (
                <>
                  {" · "}
                  <a href={`/modules/${encodeURIComponent(r.module)}`}>
                    <UserText>{r.module}</UserText>
                  </a>
                </>
              )
              : null}
          </p>
          <p class="text">
            <UserText>{r.text}</UserText>
          </p>
          <PostButton
            action={`/team/requests/${r.id}`}
            kind="secondary"
            fields={{ handled: r.handled === null ? "true" : "false" }}
            block
          >
            {r.handled === null ? `Mark #${r.id} handled` : `Open #${r.id} again`}
          </PostButton>
        </section>
      ))}
    </>,
  );
}

export async function postTeamRequestsId(deps: Deps, c: WebCtx) {
  const me = requireTeamPage(c);
  const form = await readForm(c);
  const done = await setHandled(deps, routeId(c), form.handled === "true", `account:${me.id}`);
  if (!done) fail(404, "no such request");
  return seeOther(c, "/team/requests");
}

/** The owner's command that grants or revokes `role` (cli/roles.ts), as it is typed. */
