/**
 * A proposal's status page (/contribute/status, its `status_url`): its state and dates, and with
 * the mailed secret or the submitter signed in, its title, name and published address.
 */
import { getProposal, keyMatches, publicStatusView } from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { Table } from "./_table.tsx";
import { STATUS_NAMES, STATUS_WORDS } from "./_proposal.tsx";
import { viewer, type WebCtx } from "./_web.tsx";

export async function getContributeStatus(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  const raw = c.req.query("id") ?? "";
  const id = /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : null;
  const p = id === null ? null : (await getProposal(deps.kv, id)).value;
  if (!p) {
    fail(
      404,
      "No proposal has this number. Unconfirmed proposals are deleted after seven days.",
    );
  }
  // The mailed secret, or the submitter signed in with the proposal's address, shows details.
  const own = Boolean(p.email) && viewer(c)?.email === p.email;
  const v = publicStatusView(p, own || await keyMatches(p, c.req.query("key")));
  const withReasons = v.history[0] !== undefined && "reason" in v.history[0];
  return c.render(
    <>
      <h1>Proposal {v.id}: {STATUS_NAMES[p.status]}</h1>
      <p class="lede">{STATUS_WORDS[p.status]}.</p>
      {v.title !== undefined
        ? (
          <>
            <p>
              <strong>
                <UserText>{v.title}</UserText>
              </strong>{" "}
              (<UserText>{v.area ?? ""}</UserText>), under the name{" "}
              <UserText>{v.name ?? ""}</UserText>.
            </p>
            {v.module_url
              ? (
                <p>
                  Published: <a href={v.module_url}>{`${deps.config.baseUrl}${v.module_url}`}</a>
                </p>
              )
              : null}
          </>
        )
        : <p>Open the link from your mail to see the details.</p>}
      <p>
        Sent {when(p.created)}, last change {when(p.updated)}.
      </p>
      <Table
        rows={v.history}
        columns={[
          { label: "When", cell: (_h, i) => when(p.decisions[i].at) },
          { label: "Status", cell: (h) => STATUS_WORDS[h.status] },
          withReasons
            ? {
              label: "Reason",
              cell: (h) => <UserText>{(h as { reason?: string | null }).reason ?? ""}</UserText>,
            }
            : null,
        ]}
      />
    </>,
    { title: `Proposal ${v.id}`, noindex: true },
  );
}
