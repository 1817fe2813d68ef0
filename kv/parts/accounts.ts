import { iso, isoOrNull } from "../../lib/clock.ts";
import { applicationsOf, deleteApplicationsOf, hasOpenApplication } from "../applications.ts";
import { dropAvatarChunks } from "../avatars.ts";
import { dropSeen, markSeen } from "../dormant.ts";
import { acceptInvite, countInvites, eraseInvites, invitesBy, inviteView } from "../invites.ts";
import { deleteAllEntries, listEntries } from "../journal.ts";
import type { AccountPart } from "../parts.ts";
import { listSessions } from "../sessions.ts";

/** What the accounts area holds of an account: profile, avatar, journal, applications, invitations (issue 3). */
export const accountsPart: AccountPart = {
  name: "accounts",
  async export({ kv }, account) {
    const journal = await listEntries(kv, account.id);
    const applications = await applicationsOf(kv, account.id);
    const invites = await invitesBy(kv, account.id);
    return {
      profile: { ...account.profile, langs: [...account.profile.langs] },
      journal: journal.map((e) => ({
        id: e.id,
        text: e.text,
        public: e.public,
        created: iso(e.created),
        updated: isoOrNull(e.updated),
      })),
      applications: applications.map((a) => ({
        id: a.id,
        text: a.text,
        created: iso(a.created),
        outcome: a.outcome,
        reason: a.reason,
        decided: isoOrNull(a.decided),
      })),
      invitations: invites.map(inviteView),
    };
  },
  async erase({ kv }, account) {
    await deleteAllEntries(kv, account.id);
    await deleteApplicationsOf(kv, account.id);
    await eraseInvites(kv, account.id, account.email);
    await dropAvatarChunks(kv, account.id);
    await dropSeen(kv, account.id);
    return {};
  },
  async counts({ kv, clock }, account) {
    const now = clock.now();
    return {
      open_applications: await hasOpenApplication(kv, account.id) ? 1 : 0,
      devices: (await listSessions(kv, account.id)).filter((s) => s.session.expires > now).length,
      invitations: await countInvites(kv, account.id),
    };
  },
  async afterVerify(deps, account, link) {
    const now = deps.clock.now();
    await markSeen(deps.kv, account.id, now);
    if (link.purpose === "invite" && link.invite) {
      await acceptInvite(deps.kv, link.invite, account.id, now);
    }
    return {};
  },
};
