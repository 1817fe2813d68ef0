/**
 * The team's pages of people: every account with its roles (and, for the owner, the commands
 * that change them; /team/accounts) and every invitation (/team/invitations).
 */
import {
  type Account,
  eachAccount,
  getAccount,
  isOwner,
  type Role,
  ROLES,
} from "../kv/accounts/accounts.ts";
import { allInvites } from "../kv/accounts/invites.ts";
import type { Deps } from "../lib/deps.ts";
import { InviteTable } from "./_invites.tsx";
import { CopyField, UserText } from "./_layout.tsx";
import { standingName, when } from "./_me.tsx";
import { Table } from "./_table.tsx";
import { requireTeamPage, type WebCtx } from "./_web.tsx";
import { renderTeamPage } from "./_team.tsx";

const roleCommand = (verb: "grant" | "revoke", email: string, role: Role) =>
  `deno task roles ${verb} ${email} ${role}`;

/** One account's commands, each copyable: a grant for every role it lacks, a revoke for each held. */
function RoleCommands(props: { a: Account }) {
  const { a } = props;
  return (
    <details>
      <summary>
        Commands for <UserText>{a.email}</UserText>
      </summary>
      <ul class="commands">
        {ROLES.map((role) => {
          const verb = a.roles.includes(role) ? "revoke" : "grant";
          const id = `cmd-${a.id}-${role}`;
          return (
            <li>
              <CopyField
                id={id}
                label={<>{verb === "grant" ? "Grant" : "Revoke"} {role}</>}
                value={roleCommand(verb, a.email, role)}
                copy={
                  <>
                    Copy: {verb} {role} for <UserText>{a.email}</UserText>
                  </>
                }
              />
            </li>
          );
        })}
      </ul>
    </details>
  );
}

export async function getTeamAccounts(deps: Deps, c: WebCtx) {
  const me = requireTeamPage(c);
  const owner = isOwner(me);
  const rows: Account[] = [];
  for await (const e of eachAccount(deps.kv)) rows.push(e.value);
  return renderTeamPage(
    c,
    "/team/accounts",
    "Accounts and roles",
    <>
      <p>
        Roles are never given through this site. {owner ? "You give" : "The owner gives"} or{" "}
        {owner ? "take" : "takes"}{" "}
        one back with a command on the server machine, in the folder the server runs from and with
        its KV_PATH; each change is a line in the record trail (a public log of changes that anyone
        can check). {owner ? "Each account's exact commands are below, ready to copy." : ""}
      </p>
      <p>
        <code>deno task roles grant &lt;address&gt; &lt;role&gt;</code>,{" "}
        <code>deno task roles revoke &lt;address&gt; &lt;role&gt;</code>,{" "}
        <code>deno task roles list</code>. Roles: {ROLES.join(", ")}.
      </p>
      <Table
        caption="Every account"
        rows={rows}
        columns={[
          {
            label: "Name",
            cell: (a) =>
              a.slug && a.name
                ? (
                  <a href={`/people/${a.slug}`}>
                    <UserText>{a.name}</UserText>
                  </a>
                )
                : <UserText>{a.name || "(no name)"}</UserText>,
          },
          { label: "Address", cell: (a) => <UserText>{a.email}</UserText> },
          {
            label: "Roles",
            cell: (a) =>
              a.roles.length ? a.roles.join(", ") : `none (${standingName("collector")})`,
          },
          { label: "Since", cell: (a) => when(a.created) },
          owner ? { label: "Change its roles", cell: (a) => <RoleCommands a={a} /> } : null,
        ]}
      />
    </>,
  );
}

export async function getTeamInvitations(deps: Deps, c: WebCtx) {
  requireTeamPage(c);
  const now = deps.clock.now();
  const list = await allInvites(deps.kv);
  const names = new Map<number, string>();
  for (const i of list) {
    if (!names.has(i.inviter)) {
      names.set(i.inviter, (await getAccount(deps.kv, i.inviter)).value?.name ?? "(erased)");
    }
  }
  return renderTeamPage(
    c,
    "/team/invitations",
    "Invitations",
    <InviteTable
      caption="Every invitation, newest first"
      invites={list}
      now={now}
      empty="No invitations."
      inviters={names}
    />,
  );
}
