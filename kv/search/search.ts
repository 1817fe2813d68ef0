import { type Account, getAccounts } from "../accounts/accounts.ts";
import { type DocDeps, published } from "../catalogue/catalogue_doc.ts";
import { searchPublished } from "./module_search.ts";
import { getEntries } from "../accounts/journal.ts";
import { VERSION_KEY } from "../catalogue/modules.ts";
import {
  type Found,
  listDictionary,
  matchesAll,
  newestIds,
  queryWords,
  searchVersionKey,
  strictWords,
} from "./search_index.ts";

/**
 * GET /api/search over people, public journal entries and published modules. Owns no keys:
 * it reads the word index of kv/search/search_index.ts newest first and checks every candidate
 * against the live record (named account, public entry), so nothing stale is ever shown.
 *
 * Answers are kept per process (ANSWERS_KEPT, by the query's words) with what they were built
 * from: the versionstamps of the query words' dictionary entries (any term added to the index
 * changes one, kv/search/search_index.ts) and of the version keys (people's and journal entries'
 * other changes, the catalogue's). A search reads those first, in one `getMany` and one
 * dictionary scan per word and kind, which it needs anyway; when nothing moved, the kept
 * answer is the answer (every other process's writes change the same keys, so none is
 * missed), else it is built again from the listings just read.
 */

/** Results per kind. */
const SEARCH_LIMIT = 20;

interface PersonHit {
  id: number;
  name: string;
  org: string;
  role: string;
  about: string;
}

interface JournalHit {
  id: number;
  text: string;
  created: number;
  actor_id: number;
  name: string;
}

/** Candidates one query may look at before it answers with what it found. */
const CANDIDATE_CAP = 400;

/**
 * Loads records for candidate ids (newest first, read lazily) a batch at a time, keeping
 * those `keep` accepts, until SEARCH_LIMIT are kept: a batch asks for as many ids as are
 * still missing (plus a few for hits the live record no longer supports).
 */
async function take<T, R>(
  candidates: (found: Found) => AsyncIterator<number>,
  load: (ids: number[]) => Promise<T[]>,
  keep: (r: T) => R | null | Promise<R | null>,
): Promise<R[]> {
  const out: R[] = [];
  const found: Found = { read: 0, kept: 0 };
  const ids = candidates(found);
  let seen = 0;
  let more = true;
  while (more && out.length < SEARCH_LIMIT && seen < CANDIDATE_CAP) {
    const batch: number[] = [];
    // Whole reads of ten (KV's getMany takes ten keys).
    const want = Math.ceil((SEARCH_LIMIT - out.length) / 10) * 10;
    while (batch.length < want) {
      const next = await ids.next();
      if (next.done) {
        more = false;
        break;
      }
      batch.push(next.value);
    }
    seen += batch.length;
    for (const r of await load(batch)) {
      const hit = await keep(r);
      if (hit !== null) out.push(hit);
      if (out.length >= SEARCH_LIMIT) break;
    }
    found.read = seen;
    found.kept = out.length;
  }
  return out;
}

export interface ModuleHit {
  title: string;
  slug: string;
  /** Who the module is by (the module's `by`). */
  name: string;
  url: string;
  /** The field the snippet shows (title, lede, about, who, track, area, facts, gets, ...). */
  field: string;
  /** Up to 160 characters of that field around the first match. */
  snippet: string;
}

export interface SearchAnswer {
  people: PersonHit[];
  journal: JournalHit[];
  modules: ModuleHit[];
  /** The query as probably meant, when a word of it matched modules only through a correction. */
  suggestion: string | null;
}

/** Answers kept per KV (per process), oldest dropped first. */
const ANSWERS_KEPT = 256;
const recentAnswers = new WeakMap<Deno.Kv, Map<string, { sig: string; answer: SearchAnswer }>>();
type Listings = Map<string, Deno.KvEntry<Deno.KvU64>[]>;

/**
 * The answer to a query: people and journal entries newest first, modules best match first
 * (kv/search/module_search.ts, over the published build) with a snippet each (read-only).
 */
export async function search(deps: DocDeps, q: string): Promise<SearchAnswer> {
  const { kv } = deps;
  const words = queryWords(q);
  if (words.length === 0) return { people: [], journal: [], modules: [], suggestion: null };
  const strict = strictWords(words);
  const [versions, people, journal] = await Promise.all([
    kv.getMany<Deno.KvU64[]>([
      searchVersionKey("person"),
      searchVersionKey("journal"),
      VERSION_KEY,
    ]),
    listAll(kv, "person", strict),
    listAll(kv, "journal", strict),
  ]);
  const sig = [
    versions.map((v) => v.versionstamp).join(","),
    signature(people),
    signature(journal),
  ].join("|");
  let answers = recentAnswers.get(kv);
  if (!answers) recentAnswers.set(kv, answers = new Map());
  const key = words.join(" ");
  const had = answers.get(key);
  if (had?.sig === sig) return had.answer;
  const [p, j, cat] = await Promise.all([
    searchPeople(kv, words, people),
    searchJournal(kv, words, journal),
    published(deps),
  ]);
  const found = searchPublished(cat, words.join(" "));
  const modules = found.matches.slice(0, SEARCH_LIMIT).map((x) => ({
    title: x.m.title,
    slug: x.m.slug,
    name: x.m.by,
    url: `/modules/${x.m.slug}`,
    field: x.field,
    snippet: x.snippet,
  }));
  const answer = { people: p, journal: j, modules, suggestion: found.suggestion };
  answers.delete(key);
  if (answers.size >= ANSWERS_KEPT) answers.delete(answers.keys().next().value!);
  answers.set(key, { sig, answer });
  return answer;
}

async function listAll(kv: Deno.Kv, kind: "person" | "journal", words: string[]) {
  const lists = await Promise.all(words.map((w) => listDictionary(kv, kind, w)));
  return new Map(words.map((w, i) => [w, lists[i]]));
}

/** The terms and versionstamps of dictionary listings, as text. */
function signature(listed: Listings): string {
  const parts: string[] = [];
  for (const [word, entries] of listed) {
    parts.push(word);
    for (const e of entries) parts.push(`${e.key[2] as string}:${e.versionstamp}`);
  }
  return parts.join(" ");
}

async function searchPeople(kv: Deno.Kv, words: string[], listed: Listings) {
  return await take<Account, PersonHit>(
    (found) => newestIds(kv, "person", words, found, listed),
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

async function searchJournal(kv: Deno.Kv, words: string[], listed: Listings) {
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
  return await take((found) => newestIds(kv, "journal", words, found, listed), load, (e) => {
    const name = names.get(e.account) ?? "";
    // An unnamed author has no public page, so the entry is not shown either.
    if (!name) return null;
    return { id: e.id, text: e.text, created: e.created, actor_id: e.account, name };
  });
}
