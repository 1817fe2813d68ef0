import type { Deps } from "../../lib/deps.ts";
import { atomic, transact } from "../_atomic.ts";
import { type Account, dropAccount, getAccount, personText } from "../accounts/accounts.ts";
import { dropLinksTo } from "../accounts/links.ts";
import { dropMailAbout } from "../alerts/outbox.ts";
import { accountParts, type ErasureCounts, type ErasureDecisions } from "./mod.ts";
import { droppedTerms, indexChange, pruneDictionary } from "../search/search_index.ts";
import { endAllSessions } from "../accounts/sessions.ts";
import { dropTrailIndex, trailAppend } from "../store/trail.ts";

/**
 * Erasure of an account (DELETE /api/me). Owns no keys of its own: each area's part erases
 * what it holds, then this removes the account record, its email and slug indexes, its
 * person search entries, its trail_by_account index, sessions, live links and queued mail to or
 * about its address.
 * Trail lines stay (ids only, so the chain still verifies); one `account.erase` line is
 * appended in the atomic that deletes the account.
 */
export async function eraseAccount(
  deps: Deps,
  account: Account,
  decisions: ErasureDecisions,
): Promise<ErasureCounts> {
  const { kv } = deps;
  const totals: ErasureCounts = { kept: 0, unpublished: 0, deleted: 0 };
  // Every device is signed out first: a request of another device during the erasure would
  // otherwise write into an area already erased and leave orphaned data behind.
  await endAllSessions(kv, account.id);
  for (const part of accountParts) {
    const got = await part.erase(deps, account, decisions);
    totals.kept += got.kept ?? 0;
    totals.unpublished += got.unpublished ?? 0;
    totals.deleted += got.deleted ?? 0;
  }
  const ref = `account:${account.id}`;
  let dropped: string[] = [];
  await transact(async () => {
    const entry = await getAccount(kv, account.id);
    const acc = entry.value;
    if (!acc) return { op: null, result: null };
    const op = dropAccount(atomic(kv).check(entry), acc);
    indexChange(op, "person", acc.id, personText(acc), null);
    dropped = droppedTerms(personText(acc), null);
    const trail = await trailAppend(
      kv,
      [{ actor: ref, action: "account.erase", subject: ref }],
      deps.clock.now(),
    );
    trail.apply(op);
    return { op, result: null };
  });
  await pruneDictionary(kv, "person", dropped);
  // The erase line itself was indexed under the account; the index goes with the rest.
  await dropTrailIndex(kv, account.id);
  // Again, for a session that a link opened while the erasure ran.
  await endAllSessions(kv, account.id);
  await dropLinksTo(kv, account.email);
  await dropMailAbout(kv, account.email);
  return totals;
}
