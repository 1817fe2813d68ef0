import type { Deps } from "../../lib/deps.ts";
import { transact } from "../_atomic.ts";
import type { Account } from "../accounts/accounts.ts";
import { deliver, dropMailTo, dropQueuedOf, enqueueMail } from "../alerts/outbox.ts";
import { endFollow, eraseFollowers, erasePageFollowers, stageFollow } from "./followers.ts";

/**
 * Following a status page, where it meets the outbox (kv/alerts/outbox.ts): the request with
 * its confirmation mail, the unfollow and the erasure, which drop the page's mail still queued
 * to the addresses that leave. The records are kv/status/followers.ts's. Holds no keys.
 */

/**
 * Asks to follow the page of `slug`: stores a pending follow and mails its confirmation
 * link. The same answer whether or not the address follows already (the form tells no one
 * who follows); an address that follows gets no mail. The caller limits the rate.
 */
export async function requestFollow(deps: Deps, slug: string, email: string): Promise<void> {
  const mails = await transact(async () => {
    const staged = await stageFollow(deps, slug, email);
    if (!staged) return { op: null, result: [] };
    return { op: staged.op, result: [enqueueMail(staged.op, staged.mail, deps.clock.now())] };
  });
  await deliver(deps, mails);
}

/**
 * Ends a follow through the unfollow link of a mail: the address is deleted, and so is the
 * page's mail still queued to it.
 */
export async function unfollow(deps: Deps, token: string): Promise<{ slug: string }> {
  const { slug, queued } = await endFollow(deps, token);
  if (queued) await dropMailTo(deps.kv, queued.email, queued.mark);
  return { slug };
}

/**
 * Erases the owner's followers (kv/status/followers.ts), the page's mail still queued to them and
 * what the followers are still to be told.
 */
export async function eraseFollowing(deps: Deps, owner: Account): Promise<void> {
  for (const q of await eraseFollowers(deps, owner)) await dropMailTo(deps.kv, q.email, q.mark);
  await dropQueuedOf(deps.kv, owner.id, "followers");
}

/** Erases the followers of a deleted page and the page's mail still queued to them. */
export async function erasePageFollowing(
  deps: Deps,
  account: number,
  page: number,
  slug: string,
): Promise<void> {
  for (const q of await erasePageFollowers(deps, account, page, slug)) {
    await dropMailTo(deps.kv, q.email, q.mark);
  }
}
