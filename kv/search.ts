import type { Account } from "./accounts.ts";
import { searchModules } from "./catalogue_api.ts";
import { getEntries } from "./journal.ts";
import { candidates, type DocId, matchesAll, queryWords } from "./search_index.ts";

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

async function getAccounts(kv: Deno.Kv, ids: number[]): Promise<Account[]> {
  const batches = [];
  for (let i = 0; i < ids.length; i += 10) {
    batches.push(kv.getMany<Account[]>(ids.slice(i, i + 10).map((id) => ["accounts", id])));
  }
  const out: Account[] = [];
  for (const got of await Promise.all(batches)) for (const g of got) if (g.value) out.push(g.value);
  return out;
}

export async function search(kv: Deno.Kv, q: string) {
  const words = queryWords(q);
  if (words.length === 0) return { people: [], journal: [], modules: [] };
  const [personIds, journalIds] = await Promise.all([
    candidates(kv, "person", words),
    candidates(kv, "journal", words),
  ]);
  const people = await take<Account, PersonHit>(
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
  const names = new Map<number, string>();
  const journal = await take(journalIds, (ids) => getEntries(kv, ids), async (e) => {
    if (!e.public || !matchesAll(e.text, words)) return null;
    if (!names.has(e.account)) {
      names.set(e.account, (await kv.get<Account>(["accounts", e.account])).value?.name ?? "");
    }
    const name = names.get(e.account)!;
    // An unnamed author has no public page, so the entry is not shown either.
    if (!name) return null;
    return { id: e.id, text: e.text, created: e.created, actor_id: e.account, name };
  });
  const modules = await searchModules(kv, words, SEARCH_LIMIT);
  return { people, journal, modules };
}
