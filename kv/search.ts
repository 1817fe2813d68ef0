import { type Account, getAccounts } from "./accounts.ts";
import { searchModules } from "./catalogue_api.ts";
import { getEntries } from "./journal.ts";
import { type DocId, matchesAll, queryWords, type SearchKind, wordHits } from "./search_index.ts";

/**
 * GET /api/search over people, public journal entries and published modules. Owns no keys:
 * it reads the word index of kv/search_index.ts and checks every candidate against the live
 * record (named account, public entry), so nothing stale is ever shown.
 */

/** Results per kind. */
export const SEARCH_LIMIT = 20;

export interface PersonHit {
  id: number;
  name: string;
  org: string;
  role: string;
  about: string;
}

export interface JournalHit {
  id: number;
  text: string;
  created: number;
  actor_id: number;
  name: string;
}

/** Loads records for candidate ids batch after batch, keeping those `keep` accepts. */
async function take<T, R>(
  ids: DocId[],
  load: (ids: number[]) => Promise<T[]>,
  keep: (r: T) => R | null | Promise<R | null>,
): Promise<R[]> {
  const out: R[] = [];
  const nums = ids.filter((x): x is number => typeof x === "number");
  for (let i = 0; i < nums.length && out.length < SEARCH_LIMIT; i += 50) {
    for (const r of await load(nums.slice(i, i + 50))) {
      const hit = await keep(r);
      if (hit !== null) out.push(hit);
      if (out.length >= SEARCH_LIMIT) break;
    }
  }
  return out;
}

/**
 * Candidate ids for all query words, newest first. Each word is scanned in the index (in
 * parallel); the sets of words whose scan was complete are intersected, so a rare word
 * narrows a common one before any record is read. When every scan hit the cap, the smallest
 * partial set is used. Words that prefix another query word add nothing and are skipped.
 */
export async function candidateIds(kv: Deno.Kv, kind: SearchKind, words: string[]) {
  const strict = words.filter((w) => !words.some((o) => o !== w && o.startsWith(w)));
  const hits = await Promise.all([...new Set(strict)].map((w) => wordHits(kv, kind, w)));
  const complete = hits.filter((h) => h.complete).sort((a, b) => a.ids.size - b.ids.size);
  let ids: DocId[];
  if (complete.length > 0) {
    ids = [...complete[0].ids].filter((id) => complete.every((h) => h.ids.has(id)));
  } else {
    ids = [...hits.reduce((a, b) => (b.ids.size < a.ids.size ? b : a)).ids];
  }
  return ids.sort((a, b) =>
    typeof a === "number" && typeof b === "number" ? b - a : String(a).localeCompare(String(b))
  );
}

export async function search(kv: Deno.Kv, q: string) {
  const words = queryWords(q);
  if (words.length === 0) return { people: [], journal: [], modules: [] };
  const [people, journal, modules] = await Promise.all([
    searchPeople(kv, words),
    searchJournal(kv, words),
    searchModules(kv, words, SEARCH_LIMIT),
  ]);
  return { people, journal, modules };
}

async function searchPeople(kv: Deno.Kv, words: string[]) {
  const personIds = await candidateIds(kv, "person", words);
  return await take<Account, PersonHit>(
    personIds,
    (ids) => getAccounts(kv, ids),
    (a) =>
      a.name && matchesAll(`${a.name} ${a.profile.org} ${a.profile.about}`, words)
        ? {
          id: a.id,
          name: a.name,
          org: a.profile.org,
          role: a.profile.role,
          about: a.profile.about,
        }
        : null,
  );
}

async function searchJournal(kv: Deno.Kv, words: string[]) {
  const journalIds = await candidateIds(kv, "journal", words);
  const names = new Map<number, string>();
  // Authors' names are read per batch of entries, in parallel, not one by one.
  const load = async (ids: number[]) => {
    const entries = (await getEntries(kv, ids)).filter((e) =>
      e.public && matchesAll(e.text, words)
    );
    const missing = [...new Set(entries.map((e) => e.account))].filter((a) => !names.has(a));
    for (const a of await getAccounts(kv, missing)) names.set(a.id, a.name);
    return entries;
  };
  return await take(journalIds, load, (e) => {
    const name = names.get(e.account) ?? "";
    // An unnamed author has no public page, so the entry is not shown either.
    if (!name) return null;
    return { id: e.id, text: e.text, created: e.created, actor_id: e.account, name };
  });
}
