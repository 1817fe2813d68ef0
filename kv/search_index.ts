/**
 * The word index behind GET /api/search, shared by every searchable kind. Key layout:
 *   ["search", kind, term, id] -> true
 * A term is a folded word (accents stripped, lower-case). A query word matches every term
 * it is a prefix of, found by one key-range scan, so no query reads all records.
 * Index entries are added and removed in the same atomic as the record they index
 * (`indexChange`), computed from the record's old and new text. Searches still check each
 * hit against the live record (`matchesAll` and the caller's visibility rules), so a hit
 * is never shown for text that no longer says it.
 */
import { type Atomic } from "./_atomic.ts";

export type SearchKind = "person" | "journal" | "module";
export type DocId = number | string;

const MAX_TERMS = 400;
const MAX_TERM = 40;
/** How many index keys one query word may read before it stops (bounds the worst case). */
export const SCAN_CAP = 2000;

/** Accent- and case-folded form of a text, for matching. */
export function fold(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
}

/** The distinct folded words of a text, at most MAX_TERMS of them. */
export function terms(text: string): string[] {
  const out = new Set<string>();
  for (const w of fold(text).split(/[^\p{L}\p{N}]+/u)) {
    if (w.length === 0) continue;
    out.add(w.slice(0, MAX_TERM));
    if (out.size >= MAX_TERMS) break;
  }
  return [...out];
}

/** Adds to `op` the index changes that take a record from `before` text to `after` text. */
export function indexChange(
  op: Atomic,
  kind: SearchKind,
  id: DocId,
  before: string | null,
  after: string | null,
): Atomic {
  const old = new Set(before === null ? [] : terms(before));
  const now = new Set(after === null ? [] : terms(after));
  for (const t of old) if (!now.has(t)) op.delete(["search", kind, t, id]);
  for (const t of now) if (!old.has(t)) op.set(["search", kind, t, id], true);
  return op;
}

/** Query words: folded, at most 6, each at least one character. */
export function queryWords(q: string): string[] {
  return terms(q).slice(0, 6);
}

/**
 * Candidate ids for the query words, highest (newest) id first: every id with a term that
 * the longest query word is a prefix of (longer words match fewer terms). The caller loads
 * the records, keeps those that `matchesAll` and may be shown, and stops at its limit.
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
  return [...ids].sort((a, b) =>
    typeof a === "number" && typeof b === "number" ? b - a : String(a).localeCompare(String(b))
  );
}

/** True when every query word is a prefix of some word of the text. */
export function matchesAll(text: string, words: string[]): boolean {
  const have = terms(text);
  return words.every((w) => have.some((t) => t.startsWith(w)));
}

export interface WordHits {
  word: string;
  ids: Set<DocId>;
  /** False when the scan stopped at SCAN_CAP, so ids is only part of the matches. */
  complete: boolean;
}

/** Every id with a term that `word` is a prefix of, up to SCAN_CAP index keys. */
export async function wordHits(kv: Deno.Kv, kind: SearchKind, word: string): Promise<WordHits> {
  const ids = new Set<DocId>();
  let read = 0;
  const iter = kv.list<true>({
    start: ["search", kind, word],
    end: ["search", kind, word + "\u{10FFFF}"],
  }, { batchSize: 500 });
  for await (const e of iter) {
    if (++read > SCAN_CAP) return { word, ids, complete: false };
    ids.add(e.key[3] as DocId);
  }
  return { word, ids, complete: true };
}
