/**
 * Invitations as a table: an account's own (/me/standing) and every one of them (/team/invitations,
 * where each also names who sent it).
 */
import type { Invite } from "../kv/accounts/invites.ts";
import { UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { Table } from "./_table.tsx";

/** What became of an invitation by `now`. */
function inviteOutcome(invite: Invite, now: number): string {
  return invite.accepted !== null ? "accepted" : invite.expires <= now ? "expired" : "open";
}

export function InviteTable(props: {
  caption: string;
  invites: readonly Invite[];
  now: number;
  /** The text that stands when there are none. */
  empty: string;
  /** Each inviter's name by account id: given, the table has a column of who sent each. */
  inviters?: ReadonlyMap<number, string>;
}) {
  const inviters = props.inviters;
  return (
    <Table
      caption={props.caption}
      rows={props.invites}
      empty={<p>{props.empty}</p>}
      columns={[
        { label: "Address", cell: (i) => <UserText>{i.email}</UserText> },
        inviters
          ? {
            label: "Invited by",
            cell: (i) => <UserText>{inviters.get(i.inviter) ?? ""}</UserText>,
          }
          : null,
        { label: "Sent", cell: (i) => when(i.created) },
        { label: "Outcome", cell: (i) => inviteOutcome(i, props.now) },
      ]}
    />
  );
}
