import { DAY } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { type Account, eachAccount } from "./accounts.ts";
import { deliver, enqueueMail } from "../alerts/outbox.ts";
import { dormantNoticeMail } from "../../mail/accounts.ts";
import { atomic, commit } from "../_atomic.ts";

/**
 * Last sign-in and dormant notices. Key layout:
 *   ["account_seen", account_id] -> Seen {at, notice}
 * `at` is the last time a mailed link signed the account in (the account's creation when
 * none is recorded); `notice` is when the dormant notice was mailed, null until then and
 * again after the next sign-in.
 */

/** No sign-in for this long makes an account dormant. */
export const DORMANT_AFTER = 365 * DAY;

interface Seen {
  at: number;
  notice: number | null;
}

const seenKey = (id: number) => ["account_seen", id] as const;

export async function markSeen(kv: Deno.Kv, account: number, now: number): Promise<void> {
  await commit(atomic(kv).set(seenKey(account), { at: now, notice: null } satisfies Seen));
}

export async function seenOf(kv: Deno.Kv, account: Account): Promise<Seen> {
  return (await kv.get<Seen>(seenKey(account.id))).value ?? { at: account.created, notice: null };
}

export async function dropSeen(kv: Deno.Kv, account: number): Promise<void> {
  await commit(atomic(kv).delete(seenKey(account)));
}

/**
 * Daily job: mails one notice to each account that became dormant and has not had one.
 * The notice only informs; nothing is deleted. Answers how many were mailed.
 */
export async function noticeDormant(deps: Deps): Promise<number> {
  const { kv } = deps;
  const now = deps.clock.now();
  const ids: string[] = [];
  for await (const e of eachAccount(kv)) {
    const account = e.value;
    const seenEntry = await kv.get<Seen>(seenKey(account.id));
    const seen = seenEntry.value ?? { at: account.created, notice: null };
    if (seen.notice !== null || now - seen.at < DORMANT_AFTER) continue;
    const op = atomic(kv).check(seenEntry).set(seenKey(account.id), { ...seen, notice: now });
    const notice = dormantNoticeMail(`${deps.config.baseUrl}/me`);
    const id = enqueueMail(op, { ...notice, to: account.email }, now);
    if ((await commit(op)).ok) ids.push(id);
  }
  for (let i = 0; i < ids.length; i += 10) await deliver(deps, ids.slice(i, i + 10));
  return ids.length;
}
