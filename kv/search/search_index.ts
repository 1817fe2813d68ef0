/**
 * The word index behind GET /api/search, shared by every searchable kind. Key layout:
 *   ["search", kind, term, id]   -> true                  one per word of a record's text
 *   ["search_terms", kind, term] -> Deno.KvU64 (max id)   the terms of a kind (numeric ids)
 *   ["search_version", kind]     -> Deno.KvU64            changes that are not additions
 * A term is a folded word (accents stripped, lower-case). A query word matches every term
 * it is a prefix of. Index entries are added and removed in the same atomic as the record
 * they index (`indexChange`), computed from the record's old and new text. Searches still
 * check each hit against the live record (`matchesAll` and the caller's visibility rules),
 * so a hit is never shown for text that no longer says it.
 *
 * Newest first at any size: ids of people and journal entries sort by creation time
 * (kv/store/ids.ts), so a reverse scan of ["search", kind, term] reads a term's newest ids first.
 * A query word lists its terms from the dictionary (one scan: a prefix has few terms, not
 * many records), each with the highest id ever indexed under it (raised with KV `max`, never
 * lowered: an upper bound, as a deleted record may have held it). `newestIds` merges the
 * terms' reverse scans by those bounds, fetching a term only when its bound could be the
 * next id, and intersects the words by leaping each to the other's id, so a query reads
 * about as many index keys as it returns, however many records match. A dictionary entry
 * outlives the last record with its term (it costs one empty scan when listed).
 *
 * What a search's answer depends on, for kv/search/search.ts's cache of answers: every addition of a
 * term to the index raises the term's dictionary entry with KV `max`, which gives the entry a
 * new versionstamp even when its value stays. Every write of a named person's profile (a first
 * name given, an edit, a rename, an erasure, or a field shown but not indexed, as the role:
 * names are shown beside journal hits, and an unnamed author's entries not at all) and every
 * edit or removal of a journal entry's indexed text adds 1 to `["search_version", kind]`.
 * Creating a journal entry, the common write, touches only its terms' entries: the version keys
 * are read by every search and written by the rarer changes alone (on Deno Deploy, a key
 * written by every change would be a hot key).
 */
import { type Atomic, atomic, commit, deleteKeys, keysOf } from "../_atomic.ts";

import { transact } from "../_atomic.ts";

type SearchKind = "person" | "journal";
type DocId = number | string;

/** Distinct words indexed per text: 300 removed + 300 added + 300 dictionary raises < 1000. */
const MAX_TERMS = 300;
const MAX_TERM = 40;
/** How many index keys one module query word may read before it stops (bounds the worst case). */
const SCAN_CAP = 2000;
/** Terms a query word may list from the dictionary (a one-letter word in a large index). */
const DICT_CAP = 1000;
/** Index scans one query word may make before it stops (bounds the worst case). */
const FETCH_CAP = 200;

/** Accent- and case-folded form of a text, for matching. */
export function fold(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
}

/** The distinct folded words of a text, at most `cap` (MAX_TERMS) of them. */
export function terms(text: string, cap = MAX_TERMS): string[] {
  const out = new Set<string>();
  for (const w of fold(text).split(/[^\p{L}\p{N}]+/u)) {
    if (w.length === 0) continue;
    out.add(w.slice(0, MAX_TERM));
    if (out.size >= cap) break;
  }
  return [...out];
}

const termKey = (kind: SearchKind, term: string, id: DocId) => ["search", kind, term, id] as const;
const dictKey = (kind: SearchKind, term: string) => ["search_terms", kind, term] as const;
/** The count of a kind's changes that are not additions (see the header). */
export const searchVersionKey = (kind: SearchKind) => ["search_version", kind] as const;

/**
 * Adds to `op` the index changes that take a record from `before` text to `after` text: at
 * most MAX_TERMS deletions, MAX_TERMS additions and, for numeric ids, a dictionary raise per
 * added term (docs/kv.md "Limits we keep"), plus one to the kind's version for a write of a
 * named person and for a journal entry's edit or removal (see the header). Callers call it for
 * every write of the record's shown fields, even when the indexed text stays.
 */
export function indexChange(
  op: Atomic,
  kind: SearchKind,
  id: DocId,
  before: string | null,
  after: string | null,
): Atomic {
  const old = new Set(before === null ? [] : terms(before));
  const now = new Set(after === null ? [] : terms(after));
  for (const t of old) if (!now.has(t)) op.delete(termKey(kind, t, id));
  for (const t of now) {
    if (old.has(t)) continue;
    op.set(termKey(kind, t, id), true);
    if (typeof id === "number") op.max(dictKey(kind, t), BigInt(id));
  }
  if (
    kind === "person" ? before !== null || after !== null : kind === "journal" && before !== null
  ) {
    op.sum(searchVersionKey(kind), 1n);
  }
  return op;
}

/** The terms a change from `before` to `after` text takes out of the index. */
export function droppedTerms(before: string | null, after: string | null): string[] {
  const now = new Set(after === null ? [] : terms(after));
  return before === null ? [] : terms(before).filter((t) => !now.has(t));
}

/**
 * Removes the dictionary entries of `dropped` terms that no record holds any more, after the
 * change that dropped them committed: nothing of an erased or edited text stays in KV. Each
 * entry is read before its term's ids are listed and removed only if unchanged, so a record
 * that gains the term meanwhile (its `max` changes the entry) keeps it.
 */
export async function pruneDictionary(
  kv: Deno.Kv,
  kind: SearchKind,
  dropped: string[],
): Promise<void> {
  await Promise.all(dropped.map(async (t) => {
    const entry = await kv.get(dictKey(kind, t));
    if (entry.versionstamp === null) return;
    for await (const _ of kv.list({ prefix: ["search", kind, t] }, { limit: 1 })) return;
    await commit(atomic(kv).check(entry).delete(entry.key));
  }));
}

/** Query words: folded, at most 6, each at least one character. */
export function queryWords(q: string): string[] {
  return terms(q).slice(0, 6);
}

/**
 * Candidate slugs of modules for the query words: every id with a term that the longest query
 * word is a prefix of, up to SCAN_CAP index keys. The catalogue is small (hundreds of
 * modules) and its order is the publication date, which the caller sorts by after loading.
 */
export async function candidates(kv: Deno.Kv, kind: SearchKind, words: string[]) {
  if (words.length === 0) return [];
  const driver = words.reduce((a, b) => (b.length > a.length ? b : a));
  const ids = new Set<DocId>();
  let read = 0;
  const iter = kv.list<true>({
    start: ["search", kind, driver],
    end: ["search", kind, driver + "\u{10FFFF}"],
  }, { batchSize: 500 });
  for await (const e of iter) {
    ids.add(e.key[3] as DocId);
    if (++read >= SCAN_CAP) break;
  }
  return [...ids];
}

/** True when every query word is a prefix of some word of the text. */
export function matchesAll(text: string, words: string[]): boolean {
  const have = terms(text);
  return words.every((w) => have.some((t) => t.startsWith(w)));
}

/** One term of a query word: its ids newest first, read a page at a time. */
interface TermScan {
  term: string;
  /** No id of this term not yet in `buf` is above this. */
  bound: number;
  /** Ids read and not yet passed, newest first. */
  buf: number[];
  /** The next page reads ids below this one. */
  below: number;
  page: number;
  done: boolean;
  /** Ids were passed over unread or unused since the last page (a leap, not a walk). */
  skipped: boolean;
  fetched: boolean;
  /** The id this term gave last (passing it is no leap). */
  given: number;
}

/** The union of one query word's terms, newest id first. */
interface WordScan {
  kv: Deno.Kv;
  kind: SearchKind;
  terms: TermScan[];
  fetches: number;
}

const FIRST_PAGE = 24;
const MAX_PAGE = 384;
const MIN_PAGE = 4;

/** The dictionary entries of the terms a query word is a prefix of (at most DICT_CAP). */
export async function listDictionary(
  kv: Deno.Kv,
  kind: SearchKind,
  word: string,
): Promise<Deno.KvEntry<Deno.KvU64>[]> {
  const out: Deno.KvEntry<Deno.KvU64>[] = [];
  const iter = kv.list<Deno.KvU64>({
    start: dictKey(kind, word),
    end: dictKey(kind, word + "\u{10FFFF}"),
  }, { limit: DICT_CAP, batchSize: DICT_CAP });
  for await (const e of iter) out.push(e);
  return out;
}

function openWord(
  kv: Deno.Kv,
  kind: SearchKind,
  entries: Deno.KvEntry<Deno.KvU64>[],
): WordScan {
  const terms: TermScan[] = [];
  for (const e of entries) {
    terms.push({
      term: e.key[2] as string,
      bound: Number(e.value.value),
      buf: [],
      below: Infinity,
      page: FIRST_PAGE,
      done: false,
      skipped: false,
      fetched: false,
      given: -1,
    });
  }
  return { kv, kind, terms, fetches: 0 };
}

/** Reads the next page of a term's ids, newest first, below `t.below`. */
async function fetchTerm(w: WordScan, t: TermScan): Promise<void> {
  w.fetches++;
  const prefix = ["search", w.kind, t.term];
  const selector = t.below === Infinity
    ? { prefix }
    : { prefix, end: termKey(w.kind, t.term, t.below) as Deno.KvKey };
  // A term read page after page gets longer pages; one that the others leap over, shorter
  // ones (a leap needs only the first id below the candidate).
  if (t.fetched) {
    t.page = t.skipped ? Math.max(MIN_PAGE, t.page >> 1) : Math.min(t.page * 2, MAX_PAGE);
  }
  t.fetched = true;
  t.skipped = false;
  const ids: number[] = [];
  for await (
    const e of w.kv.list<true>(selector, { reverse: true, limit: t.page, batchSize: t.page })
  ) ids.push(e.key[3] as number);
  t.done = ids.length < t.page;
  t.buf = ids;
  if (ids.length > 0) t.below = ids[ids.length - 1];
  t.bound = ids.length > 0 ? ids[0] : -Infinity;
}

/** The highest id at most `x` that any of the word's terms holds, or null. */
async function atMost(w: WordScan, x: number): Promise<number | null> {
  for (;;) {
    let best: TermScan | null = null;
    let bestHead = -Infinity;
    for (const t of w.terms) {
      if (t.buf.length > 0 && t.buf[0] > x) {
        // Ids given already are gone from buf; these were leapt over.
        while (t.buf.length > 0 && t.buf[0] > x) {
          if (t.buf.shift() !== t.given) t.skipped = true;
        }
      }
      if (t.buf.length === 0) {
        if (t.done) continue;
        // Ids above x are of no use any more: the next page starts at x.
        if (t.below > x + 1) {
          t.below = x + 1;
          t.skipped = true;
        }
        if (t.bound > x) t.bound = x;
      }
      const head = t.buf.length > 0 ? t.buf[0] : t.bound;
      if (head > bestHead || (head === bestHead && best !== null && t.buf.length > 0)) {
        best = t;
        bestHead = head;
      }
    }
    if (best === null || bestHead === -Infinity) return null;
    // A read id beats every other term's bound: it is the next id of the union.
    if (best.buf.length > 0) return best.given = best.buf[0];
    if (w.fetches >= FETCH_CAP) return null;
    await fetchTerm(w, best);
  }
}

/** A query word with at most this many terms is probed for its density. */
const NARROW = 8;
/** The newest ids a probe compares. */
const PROBE = 20;
/** A word joins the leader in the index when its span is at least 1/JOIN of the leader's. */
const JOIN = 4;

/** The distinct query words that prefix no other query word (the others add nothing). */
export function strictWords(words: string[]): string[] {
  return [...new Set(words)].filter((w) => !words.some((o) => o !== w && o.startsWith(w)));
}

/** What the caller's record check made of the candidates so far. */
export interface Found {
  read: number;
  kept: number;
}

/**
 * Candidate ids for the query words, newest first, read lazily: the caller checks each
 * against its record (`matchesAll`, which every match passes) and stops at its limit.
 * Numeric ids only (people and journal entries).
 *
 * The sparsest word gives the candidates: words of few terms (NARROW) are probed by reading
 * their first pages (which the leader needs anyway) and compared by how far back their
 * PROBE-th newest id lies; a word of many terms (a short prefix) counts as dense. A word
 * about as sparse as the leader joins it in the index: each leaps to the other's next id (a
 * leapfrog), so two words that rarely meet cost reads of their meetings, not of either
 * word's entries. Denser words are left to the record check (one read per ten candidates,
 * cheaper than a seek per candidate in each of their terms); when nine in ten fail it,
 * as the caller tells through `found`, the next word joins the leapfrog, so no match is
 * passed over for a cap. Words that prefix another query word add nothing and are dropped.
 * `listed` holds dictionary listings the caller already made (`listDictionary`), by word.
 */
export async function* newestIds(
  kv: Deno.Kv,
  kind: SearchKind,
  words: string[],
  found: Found = { read: 0, kept: 0 },
  listed: Map<string, Deno.KvEntry<Deno.KvU64>[]> = new Map(),
): AsyncGenerator<number> {
  const strict = strictWords(words);
  if (strict.length === 0) return;
  const all = await Promise.all(
    strict.map(async (w) => openWord(kv, kind, listed.get(w) ?? await listDictionary(kv, kind, w))),
  );
  if (all.some((w) => w.terms.length === 0)) return;
  for (const w of all) {
    // Many terms: small first pages (most terms give one or two of the newest ids).
    const first = Math.max(MIN_PAGE, Math.min(FIRST_PAGE, Math.ceil(96 / w.terms.length)));
    for (const t of w.terms) t.page = first;
  }
  // How far back (in id, that is time) a word's PROBE newest ids reach; Infinity: fewer.
  const span = new Map<WordScan, number>();
  if (all.length > 1) {
    await Promise.all(
      all.filter((w) => w.terms.length <= NARROW).map(async (w) => {
        await Promise.all(w.terms.map((t) => fetchTerm(w, t)));
        const ids = w.terms.flatMap((t) => t.buf).sort((a, b) => b - a);
        span.set(w, ids.length < PROBE ? Infinity : ids[0] - ids[PROBE - 1]);
      }),
    );
  }
  const sparse = (w: WordScan) => span.get(w) ?? -w.terms.length;
  all.sort((a, b) => sparse(b) - sparse(a));
  const lead = sparse(all[0]);
  const scans = all.filter((w, i) => i === 0 || (span.has(w) && sparse(w) * JOIN >= lead));
  let since = { read: 0, kept: 0 };
  let x = Number.MAX_SAFE_INTEGER;
  for (;;) {
    // Nine candidates in ten failing the record check (or many read): a word left to it is
    // rarer with the leader than it looked (or was not probed); it joins the leapfrog.
    const read = found.read - since.read;
    if (read >= 30 && (found.kept - since.kept) * 10 < read || read >= 200) {
      const next = all.find((w) => !scans.includes(w));
      if (next) scans.push(next);
      since = { ...found };
    }
    let cand = await atMost(scans[0], x);
    if (cand === null) return;
    let agreed = 1;
    for (let i = 1; agreed < scans.length; i = (i + 1) % scans.length) {
      const y = await atMost(scans[i], cand);
      if (y === null) return;
      if (y < cand) {
        cand = y;
        agreed = 1;
      } else agreed++;
    }
    yield cand;
    x = cand - 1;
  }
}

/**
 * Migration step (kv/store/migrations.ts): fills the dictionary from the records of a kind and
 * removes the index keys of words beyond MAX_TERMS that the earlier cap of 400 wrote (each
 * removal checked against the record, read again, so an edit made meanwhile wins). Safe to
 * run again and beside writers: dictionary raises commute, term keys are only removed.
 */
/**
 * Drops the index of the modules (migration 12): the catalogue's own search
 * (kv/search/module_search.ts) works on the published build, and nothing reads these keys.
 */
export async function dropModuleIndex(kv: Deno.Kv): Promise<void> {
  for (const prefix of [["search", "module"], ["search_terms", "module"]]) {
    await deleteKeys(kv, keysOf(kv, { prefix }));
  }
  await commit(atomic(kv).delete(["search_version", "module"]));
}

export async function rebuildDictionary<T>(
  kv: Deno.Kv,
  kind: SearchKind,
  records: AsyncIterable<Deno.KvEntry<T>>,
  text: (record: T) => string | null,
  idOf: (record: T) => DocId,
): Promise<void> {
  const newest = new Map<string, number>();
  for await (const r of records) {
    const id = idOf(r.value);
    const all = terms(text(r.value) ?? "", 400);
    if (typeof id === "number") {
      for (const t of all.slice(0, MAX_TERMS)) if ((newest.get(t) ?? -1) < id) newest.set(t, id);
    }
    if (all.length <= MAX_TERMS) continue;
    await transact(async () => {
      const now = await kv.get<T>(r.key);
      const extra = now.value === null ? [] : terms(text(now.value) ?? "", 400).slice(MAX_TERMS);
      if (extra.length === 0) return { op: null, result: 0 };
      const op = atomic(kv).check(now);
      for (const t of extra) op.delete(termKey(kind, t, id));
      return { op, result: 0 };
    });
  }
  let op = atomic(kv);
  let n = 0;
  for (const [t, id] of newest) {
    op.max(dictKey(kind, t), BigInt(id));
    if (++n % 500 === 0) {
      await commit(op);
      op = atomic(kv);
    }
  }
  await commit(op);
}
