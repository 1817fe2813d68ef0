import { fold, queryWords } from "./search_index.ts";
import type { Published } from "../catalogue/catalogue_doc.ts";
import { labelOf } from "../../lib/learning.ts";
import type { Module } from "../catalogue/modules.ts";

/**
 * Search of the published modules, over every public field, ranked, with a snippet, and with
 * one edit forgiven in words of five letters or more (a letter wrong, missing, extra, or two
 * swapped: "brids" finds "birds"). It reads no KV: it works on the published build
 * (kv/catalogue/catalogue_doc.ts `published`, which the catalogue page, GET /api/catalogue and
 * GET /api/search share), whose index is made once per build (`indexes`, keyed by the build
 * object: a new catalogue version is a new key). Holds no KV keys.
 *
 * Each field has a weight (a word of the title counts more than one of the about text); a
 * query word scores, in each module, the best of its terms there: the word itself, a word it
 * begins ("pond" finds "ponds"), or a word one edit away, each weighted less, times the
 * field's weight and the term's rarity (idf). A module must hold every query word; its score
 * is the sum. When a word matched only through a correction, the answer says what was meant.
 */

const FIELDS = [
  ["title", 6],
  ["subject", 4],
  ["track", 4],
  ["area", 3],
  ["people", 3],
  ["lede", 2.5],
  ["who", 2],
  ["gets", 1.5],
  ["facts", 1.2],
  ["about", 1],
] as const;
type SearchField = typeof FIELDS[number][0];

const EXACT = 1;
const PREFIX = 0.7;
const TYPO = 0.5;
/** Words shorter than this are never corrected (too many near neighbours). */
const TYPO_MIN = 5;

interface Doc {
  m: Module;
  /** Each field's text, for snippets. */
  texts: Record<SearchField, string>;
}

interface Index {
  docs: Doc[];
  /** term -> doc index -> best field weight holding it. */
  postings: Map<string, Map<number, number>>;
  /** Every term, sorted (prefix ranges by binary search). */
  sorted: string[];
  /**
   * Each term with one letter left out, to the terms it comes from (a symmetric-delete index:
   * a correction is found by a few lookups, not by comparing every term).
   */
  deletes: Map<string, string[]>;
}

const indexes = new WeakMap<Published, Index>();

const wordsOf = (text: string) => fold(text).split(/[^\p{L}\p{N}]+/u).filter(Boolean);

function textsOf(m: Module, names: Map<number, string>): Record<SearchField, string> {
  return {
    title: m.title,
    subject: (m.subject ?? []).map((s) => labelOf("subject", s)).join(", "),
    track: m.track,
    area: m.area,
    people: [m.by, ...m.contributors.map((id) => names.get(id) ?? "")].filter(Boolean).join(", "),
    lede: m.lede,
    who: m.who,
    gets: m.gets.join(" · "),
    facts: m.facts.map(([l, v]) => `${l}: ${v}`).join(" · "),
    about: m.about,
  };
}

function indexOf(p: Published): Index {
  const had = indexes.get(p);
  if (had) return had;
  const docs: Doc[] = p.modules.map((m) => ({ m, texts: textsOf(m, p.names) }));
  const postings = new Map<string, Map<number, number>>();
  docs.forEach((d, i) => {
    for (const [field, weight] of FIELDS) {
      for (const w of wordsOf(d.texts[field])) {
        let list = postings.get(w);
        if (!list) postings.set(w, list = new Map());
        if ((list.get(i) ?? 0) < weight) list.set(i, weight);
      }
    }
  });
  const sorted = [...postings.keys()].sort();
  const deletes = new Map<string, string[]>();
  for (const t of sorted) {
    if ([...t].length < TYPO_MIN - 1) continue;
    for (const d of oneLess(t)) {
      const list = deletes.get(d);
      if (!list) deletes.set(d, [t]);
      else if (list[list.length - 1] !== t) list.push(t);
    }
  }
  const index = { docs, postings, sorted, deletes };
  indexes.set(p, index);
  return index;
}

/** True when `a` and `b` are at most one edit apart (a transposition counts as one). */
export function oneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  const x = [...a];
  const y = [...b];
  if (Math.abs(x.length - y.length) > 1) return false;
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  if (x.length === y.length) {
    // One substitution, or two neighbours swapped.
    const rest = (k: number) => x.slice(k).join("") === y.slice(k).join("");
    return rest(i + 1) || (x[i] === y[i + 1] && x[i + 1] === y[i] && rest(i + 2));
  }
  const [long, short] = x.length > y.length ? [x, y] : [y, x];
  return long.slice(i + 1).join("") === short.slice(i).join("");
}

/** The terms a query word matches, each with its quality. */
function termsFor(ix: Index, word: string): { term: string; q: number; typo: boolean }[] {
  const out: { term: string; q: number; typo: boolean }[] = [];
  // Prefix range: binary search for the first term >= word.
  let lo = 0;
  let hi = ix.sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ix.sorted[mid] < word) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < ix.sorted.length && ix.sorted[k].startsWith(word); k++) {
    const term = ix.sorted[k];
    out.push({ term, q: term === word ? EXACT : PREFIX, typo: false });
    if (out.length >= 200) break;
  }
  if ([...word].length >= TYPO_MIN && !out.some((o) => o.q === EXACT)) {
    // A term one edit away: it is the word less a letter, or the word is it less one, or both
    // less one are the same (a letter changed, or two swapped).
    const near = new Set<string>(ix.deletes.get(word) ?? []);
    for (const d of oneLess(word)) {
      if (ix.postings.has(d)) near.add(d);
      for (const t of ix.deletes.get(d) ?? []) near.add(t);
    }
    for (const term of near) {
      if (term !== word && oneEdit(word, term)) out.push({ term, q: TYPO, typo: true });
    }
  }
  return out;
}

/** The word with each of its letters left out in turn. */
function oneLess(word: string): Set<string> {
  const chars = [...word];
  const out = new Set<string>();
  for (let i = 0; i < chars.length; i++) {
    out.add([...chars.slice(0, i), ...chars.slice(i + 1)].join(""));
  }
  return out;
}

export interface ModuleMatch {
  m: Module;
  score: number;
  /** The field the snippet comes from. */
  field: SearchField;
  /** A part of that field around the first match, with the matched words' places. */
  snippet: string;
  marks: [number, number][];
}

interface ModuleSearch {
  matches: ModuleMatch[];
  /** The query as it was probably meant, when a word matched only through a correction. */
  suggestion: string | null;
}

/** Published modules matching every word of `q`, best first. */
export function searchPublished(p: Published, q: string, within?: Set<string>): ModuleSearch {
  const words = queryWords(q);
  if (words.length === 0) return { matches: [], suggestion: null };
  const ix = indexOf(p);
  const n = ix.docs.length;
  let scores: Map<number, number> | null = null;
  const corrected: string[] = [];
  const matchedTerms = new Set<string>();
  for (const word of words) {
    const found = termsFor(ix, word);
    const best = new Map<number, number>();
    for (const { term, q: quality } of found) {
      const list = ix.postings.get(term)!;
      const idf = Math.log(1 + n / list.size);
      for (const [doc, weight] of list) {
        const s = weight * quality * idf;
        if ((best.get(doc) ?? 0) < s) best.set(doc, s);
      }
      matchedTerms.add(term);
    }
    const typoOnly = found.length > 0 && found.every((f) => f.typo);
    corrected.push(typoOnly ? bestCorrection(ix, found) : word);
    const prev: Map<number, number> | null = scores;
    const next = new Map<number, number>();
    for (const [doc, s] of best) {
      if (prev === null) next.set(doc, s);
      else if (prev.has(doc)) next.set(doc, prev.get(doc)! + s);
    }
    scores = next;
    if (scores.size === 0) break;
  }
  const matches: ModuleMatch[] = [];
  for (const [doc, score] of scores ?? []) {
    const d = ix.docs[doc];
    if (within && !within.has(d.m.slug)) continue;
    matches.push({ m: d.m, score, ...snippetOf(d, matchedTerms) });
  }
  matches.sort((a, b) =>
    b.score - a.score || (b.m.published_at ?? 0) - (a.m.published_at ?? 0) ||
    (a.m.slug < b.m.slug ? -1 : 1)
  );
  const suggestion = corrected.join(" ") !== words.join(" ") ? corrected.join(" ") : null;
  return { matches, suggestion };
}

/** The correction found in the most modules. */
function bestCorrection(ix: Index, found: { term: string }[]): string {
  return found.reduce((
    a,
    b,
  ) => (ix.postings.get(b.term)!.size > ix.postings.get(a.term)!.size ? b : a)).term;
}

const SNIPPET = 160;

/** The first field (by weight) holding a matched term, cut around it, with its marks. */
function snippetOf(d: Doc, terms: Set<string>) {
  const order: SearchField[] = [
    "lede",
    "about",
    "who",
    "gets",
    "facts",
    "track",
    "subject",
    "area",
    "people",
    "title",
  ];
  for (const field of order) {
    const text = d.texts[field];
    const marks: [number, number][] = [];
    for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
      if (terms.has(fold(m[0]))) marks.push([m.index!, m.index! + m[0].length]);
    }
    if (marks.length === 0) continue;
    const start = Math.max(0, marks[0][0] - 60);
    const end = Math.min(text.length, start + SNIPPET);
    const from = start === 0 ? 0 : text.lastIndexOf(" ", start) + 1 || start;
    const cut = text.slice(from, end);
    const pre = from > 0 ? "…" : "";
    const post = end < text.length ? "…" : "";
    return {
      field,
      snippet: pre + cut + post,
      marks: marks.filter(([a, b]) => a >= from && b <= end).map(([a, b]) =>
        [a - from + pre.length, b - from + pre.length] as [number, number]
      ),
    };
  }
  return { field: "title" as SearchField, snippet: d.m.lede || d.m.title, marks: [] };
}
