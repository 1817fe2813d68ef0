import { iso, isoOrNull } from "../../lib/clock.ts";
import {
  applicationsOf,
  deleteApplicationsOf,
  hasOpenApplication,
} from "../accounts/applications.ts";
import { dropAvatarChunks } from "../files/avatars.ts";
import { namesOf } from "../catalogue/modules.ts";
import { dropSeen, markSeen, seenOf } from "../accounts/dormant.ts";
import {
  acceptInvite,
  countInvites,
  eraseInvites,
  invitesBy,
  invitesTo,
  inviteView,
} from "../accounts/invites.ts";
import { deleteAllEntries, listEntries } from "../accounts/journal.ts";
import type { AccountPart } from "./_part.ts";
import { listSessions } from "../accounts/sessions.ts";

/**
 * What the accounts area holds of an account: profile, avatar, journal, applications,
 * invitations sent and received, device sessions and the last sign-in.
 */
export const accountsPart: AccountPart = {
  name: "accounts",
  sections: {
    profile: {
      what: "Your profile as you wrote it",
      kept: "Until you change it or erase the account",
    },
    journal: {
      what: "Your journal entries, private ones included",
      kept: "Until you delete them or erase the account",
    },
    applications: {
      what: "Your applications for contributor standing, with the team's decision and reason",
      kept: "Until you erase the account",
    },
    invitations: {
      what: "Invitations you sent (address, message, when, whether accepted)",
      kept: "Until you erase the account; the invitation link itself lasts seven days",
    },
    invitations_received: {
      what: "Invitations others sent to your address (who, message, when, when accepted)",
      kept: "In the inviter's list until the inviter erases their account; erasing yours " +
        "blanks your address and the message in it",
    },
    devices: {
      what: "Your device sessions (signed-in browsers and tools): id, created, expires, last " +
        "used, how it signed in (link, a provider, passkey); the token itself is stored only " +
        "as a hash",
      kept: "30 days from sign-in (the record goes a day later), or until you sign the " +
        "device out",
    },
    sign_in: {
      what: "When a mailed link last signed you in, and when a dormant-account notice was " +
        "mailed (null: none)",
      kept: "Until you erase the account; after 365 days without a sign-in one notice is " +
        "mailed and nothing is deleted",
    },
  },
  async export({ kv }, account) {
    const journal = await listEntries(kv, account.id);
    const applications = await applicationsOf(kv, account.id);
    const invites = await invitesBy(kv, account.id);
    const received = await invitesTo(kv, account.email);
    const inviters = await namesOf(kv, received.map((i) => i.inviter));
    const sessions = (await listSessions(kv, account.id))
      .map(({ session }) => session)
      .sort((a, b) => b.id - a.id);
    const seen = await seenOf(kv, account);
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
      invitations_received: received.map((i) => ({
        id: i.id,
        inviter: { id: i.inviter, name: inviters.get(i.inviter) ?? null },
        email: i.email,
        message: i.message,
        created: iso(i.created),
        expires: iso(i.expires),
        accepted: isoOrNull(i.accepted),
        account: i.account,
      })),
      devices: sessions.map((s) => ({
        id: s.id,
        created: iso(s.created),
        expires: iso(s.expires),
        last_used: iso(s.last_used),
        via: s.via ?? "link",
      })),
      sign_in: { last: iso(seen.at), dormant_notice: isoOrNull(seen.notice) },
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
