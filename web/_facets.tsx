/**
 * The catalogue's facets: for each of licence, level, subject, language, type, area, track and
 * state, the values the modules hold, each with the number of modules it would show (counted
 * over the modules that pass every other chosen filter and the keyword), as links that add or
 * remove it; the keyword box; and the page for no match, which offers to remove each filter.
 * Every choice is in the address, so a view can be shared and reloaded.
 */
import type { Module } from "../kv/catalogue/modules.ts";
import { LICENCES, VOCABULARIES } from "../lib/learning.ts";
import { STATES } from "../kv/catalogue/modules.ts";
import {
  type Catalogue,
  catalogueQuery,
  type Facet,
  FACETS,
  type Filter,
  NO_LICENCE_VALUE,
  passes,
  valueLabel,
  valuesOf,
} from "./_catalogue.ts";
import { UserText } from "./_layout.tsx";

export const FACET_LABELS: Record<Facet, string> = {
  licence: "Licence",
  level: "Level",
  subject: "Subject",
  language: "Language",
  type: "Kind of material",
  area: "Area",
  track: "Track",
  state: "State",
};

/** The order a facet's values are listed in: its vocabulary's, or by name. */
function orderOf(cat: Catalogue, facet: Facet): string[] {
  switch (facet) {
    case "licence":
      return [...LICENCES.map((l) => l.id), NO_LICENCE_VALUE];
    case "level":
    case "subject":
    case "language":
    case "type":
      return VOCABULARIES[facet].map((t) => t.id);
    case "area":
      return cat.areas;
    case "track":
      return cat.tracks;
    case "state":
      return [...STATES];
  }
}

type FacetCounts = Record<Facet, [value: string, count: number][]>;

/** For each facet, its values with their counts among `base` (the keyword's matches). */
export function countFacets(cat: Catalogue, base: Module[], f: Filter): FacetCounts {
  const out = {} as FacetCounts;
  for (const facet of FACETS) {
    const counts = new Map<string, number>();
    for (const m of base) {
      if (!passes(m, f, facet)) continue;
      for (const v of valuesOf(m, facet)) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const chosen = f[facet];
    out[facet] = orderOf(cat, facet)
      .filter((v) => (counts.get(v) ?? 0) > 0 || v === chosen)
      .map((v) => [v, counts.get(v) ?? 0]);
  }
  return out;
}

/** The address of the catalogue with one filter changed (undefined: removed). */
export function withFilter(f: Filter, facet: Facet | "q", value: string | undefined): string {
  return `/catalogue${catalogueQuery({ ...f, [facet]: value })}`;
}

export function SearchBox({ f }: { f: Filter }) {
  return (
    <form method="get" action="/catalogue" role="search" class="searchbox">
      <div class="field">
        <label for="f-q">Search the catalogue</label>
        <input id="f-q" name="q" type="search" value={f.q ?? ""} maxlength={200} />
      </div>
      {FACETS.filter((facet) => f[facet] !== undefined).map((facet) => (
        <input type="hidden" name={facet} value={f[facet]} />
      ))}
      <button type="submit">Find modules</button>
    </form>
  );
}

export function FacetPanel({ f, counts }: { f: Filter; counts: FacetCounts }) {
  // On a phone the facets fold under one summary (open once a filter is chosen); from 52 rem
  // on, site.css shows them beside the list whatever the summary's state.
  const chosen = FACETS.some((facet) => f[facet] !== undefined);
  return (
    <details class="facets" open={chosen}>
      <summary>Filter by licence, level, subject and more</summary>
      {FACETS.filter((facet) => counts[facet].length > 0).map((facet) => (
        <nav aria-labelledby={`facet-${facet}`}>
          <h2 id={`facet-${facet}`}>{FACET_LABELS[facet]}</h2>
          <ul>
            {counts[facet].map(([v, n]) => {
              const on = f[facet] === v;
              return (
                <li>
                  <a
                    href={withFilter(f, facet, on ? undefined : v)}
                    aria-current={on ? "true" : undefined}
                    class={on ? "on" : undefined}
                  >
                    <UserText>{valueLabel(facet, v)}</UserText> ({n})
                    {on ? <span class="visually-hidden">(chosen: remove)</span> : null}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
      ))}
    </details>
  );
}

/** The filters chosen, each with a link that removes it. */
export function ChosenFilters({ f }: { f: Filter }) {
  const chosen = FACETS.filter((facet) => f[facet] !== undefined);
  if (chosen.length === 0 && !f.q) return null;
  return (
    <ul class="inline chosen" aria-label="Chosen filters">
      {chosen.map((facet) => (
        <li>
          <a href={withFilter(f, facet, undefined)}>
            Remove {FACET_LABELS[facet].toLowerCase()}:{" "}
            <UserText>{valueLabel(facet, f[facet]!)}</UserText>
          </a>
        </li>
      ))}
      {f.q
        ? (
          <li>
            <a href={withFilter(f, "q", undefined)}>
              Remove the words “<UserText>{f.q}</UserText>”
            </a>
          </li>
        )
        : null}
      {chosen.length + (f.q ? 1 : 0) > 1
        ? (
          <li>
            <a href="/catalogue">Clear all</a>
          </li>
        )
        : null}
    </ul>
  );
}

/** No module matches: each filter, with how many modules its removal would show. */
export function NoMatch(
  { f, countWithout }: { f: Filter; countWithout: (facet: Facet | "q") => number },
) {
  const chosen: (Facet | "q")[] = [...FACETS.filter((facet) => f[facet] !== undefined)];
  if (f.q) chosen.push("q");
  return (
    <div class="nomatch">
      <h2>No module matches</h2>
      {chosen.length
        ? (
          <>
            <p>Remove a filter to see more:</p>
            <ul>
              {chosen.map((facet) => {
                const n = countWithout(facet);
                const what = facet === "q"
                  ? `the words “${f.q}”`
                  : `${FACET_LABELS[facet].toLowerCase()}: ${valueLabel(facet, f[facet]!)}`;
                return (
                  <li>
                    <a href={withFilter(f, facet, undefined)}>
                      Remove <UserText>{what}</UserText>
                    </a>{" "}
                    ({n} module{n === 1 ? "" : "s"})
                  </li>
                );
              })}
            </ul>
          </>
        )
        : <p>The catalogue has no published modules yet.</p>}
    </div>
  );
}
