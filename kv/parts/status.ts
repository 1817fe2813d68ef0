import { iso } from "../../lib/clock.ts";
import { followerCount } from "../status/followers.ts";
import { eraseFollowing } from "../status/follows.ts";
import { eraseNotes, listNotes } from "../status/notes.ts";
import { listStatusPages } from "../status/settings.ts";
import type { AccountPart } from "./_part.ts";

/** What the status page's audience area holds of an account: its incident notes and its
 * followers (of whom the export gives the number only: they are other people). The page's
 * settings are in the services part. */
/** The confirmed followers of all the account's pages. */
async function followersOf(kv: Deno.Kv, account: number): Promise<number> {
  let n = 0;
  for (const p of await listStatusPages(kv, account)) n += await followerCount(kv, account, p.id);
  return n;
}

export const statusPart: AccountPart = {
  name: "status",
  sections: {
    status_notes: {
      what: "The incident notes you posted on your status page",
      kept: "90 days after posting, or until you delete them or erase the account",
    },
    status_followers: {
      what: "How many people follow your status pages by mail (their addresses are theirs: " +
        "not exported, and erased with your account)",
      kept: "Until they unfollow or you erase the account; an unconfirmed follow 7 days",
    },
  },
  async export(deps, account) {
    const notes = await listNotes(deps.kv, account.id, deps.clock.now());
    return {
      status_notes: notes.map((n) => ({ id: n.id, kind: n.kind, text: n.text, at: iso(n.at) })),
      status_followers: {
        count: await followersOf(deps.kv, account.id),
      },
    };
  },
  async erase(deps, account) {
    await eraseFollowing(deps, account);
    await eraseNotes(deps.kv, account.id);
    return {};
  },
};
