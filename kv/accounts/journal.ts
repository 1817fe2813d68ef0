import { atomic, transact } from "../_atomic.ts";
import { claimId } from "../store/ids.ts";
import { rateInto, RULES } from "../store/rate_limit.ts";
import { droppedTerms, indexChange, pruneDictionary } from "../search/search_index.ts";
import { getManyValues } from "../_batch.ts";

/**
 * Journal entries. Key layout:
 *   ["journal", id]                          -> JournalEntry
 *   ["journal_by_account", account_id, id]   -> true
 * Public entries are in the word index as ["search", "journal", term, id]; the index, the
 * entry and its account index change in one atomic, so a private or deleted entry leaves
 * search results at once.
 */

export interface JournalEntry {
  id: number;
  account: number;
  text: string;
  public: boolean;
  created: number;
  /** null until the entry is changed. */
  updated: number | null;
}

const entryKey = (id: number) => ["journal", id] as const;
const byAccountKey = (account: number, id: number) => ["journal_by_account", account, id] as const;

/** What the search index holds of an entry: its text while public, nothing otherwise. */
export const indexed = (e: JournalEntry | null) => (e && e.public ? e.text : null);

/**
 * Writes a new entry. The account's hourly limit (RULES.journal) is counted in the same atomic,
 * so a post that fails is not counted; over the limit it throws a `limited` error.
 */
export async function addEntry(
  kv: Deno.Kv,
  account: number,
  input: { text: string; public: boolean },
  now: number,
): Promise<JournalEntry> {
  return await transact(async () => {
    const rate = await rateInto(kv, RULES.journal, `${RULES.journal.name}:${account}`, now);
    const claim = await claimId(kv, "journal", entryKey);
    const entry: JournalEntry = {
      id: claim.id,
      account,
      text: input.text,
      public: input.public,
      created: now,
      updated: null,
    };
    const op = rate.apply(claim.apply(atomic(kv)))
      .set(entryKey(entry.id), entry)
      .set(byAccountKey(account, entry.id), true);
    indexChange(op, "journal", entry.id, null, indexed(entry));
    return { op, result: entry };
  });
}

/** One entry of an account, or null (unknown, or another account's). */
export async function getEntry(kv: Deno.Kv, account: number, id: number) {
  const e = await kv.get<JournalEntry>(entryKey(id));
  return e.value && e.value.account === account ? e as Deno.KvEntry<JournalEntry> : null;
}

/** Entries by id, skipping the missing ones, in the order asked. */
export async function getEntries(kv: Deno.Kv, ids: number[]): Promise<JournalEntry[]> {
  return await getManyValues<JournalEntry>(kv, ids.map(entryKey));
}

/** Every entry of every account, in id order (the search index's migration). */
export function eachEntry(kv: Deno.Kv): AsyncIterableIterator<Deno.KvEntry<JournalEntry>> {
  return kv.list<JournalEntry>({ prefix: ["journal"] });
}

/** Every entry of an account, newest first. */
export async function listEntries(kv: Deno.Kv, account: number): Promise<JournalEntry[]> {
  const ids: number[] = [];
  for await (
    const e of kv.list({ prefix: ["journal_by_account", account] }, { reverse: true })
  ) ids.push(e.key[2] as number);
  return await getEntries(kv, ids);
}

export async function updateEntry(
  kv: Deno.Kv,
  account: number,
  id: number,
  patch: { text?: string; public?: boolean },
  now: number,
): Promise<JournalEntry | null> {
  let dropped: string[] = [];
  const result = await transact(async () => {
    const found = await getEntry(kv, account, id);
    if (!found) return { op: null, result: null };
    const old = found.value;
    const next: JournalEntry = {
      ...old,
      text: patch.text ?? old.text,
      public: patch.public ?? old.public,
    };
    if (next.text === old.text && next.public === old.public) return { op: null, result: old };
    next.updated = now;
    const op = atomic(kv).check(found).set(entryKey(id), next);
    indexChange(op, "journal", id, indexed(old), indexed(next));
    dropped = droppedTerms(indexed(old), indexed(next));
    return { op, result: next };
  });
  await pruneDictionary(kv, "journal", dropped);
  return result;
}

export async function deleteEntry(kv: Deno.Kv, account: number, id: number): Promise<boolean> {
  let dropped: string[] = [];
  const result = await transact(async () => {
    const found = await getEntry(kv, account, id);
    if (!found) return { op: null, result: false };
    const op = atomic(kv).check(found).delete(entryKey(id)).delete(byAccountKey(account, id));
    indexChange(op, "journal", id, indexed(found.value), null);
    dropped = droppedTerms(indexed(found.value), null);
    return { op, result: true };
  });
  await pruneDictionary(kv, "journal", dropped);
  return result;
}

/** Deletes every entry of an account with its index entries (erasure); answers the count. */
export async function deleteAllEntries(kv: Deno.Kv, account: number): Promise<number> {
  let n = 0;
  for (const e of await listEntries(kv, account)) {
    if (await deleteEntry(kv, account, e.id)) n++;
  }
  return n;
}
