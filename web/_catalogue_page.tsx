/**
 * The catalogue (/catalogue): keyword, facets with counts, sort and pages; a signed-out
 * visitor's page is kept per catalogue build and counts snapshot.
 */
import type { Module } from "../kv/catalogue/modules.ts";
import {
  type Catalogue,
  catalogue,
  catalogueQuery,
  type Facet,
  FACETS,
  feedTitle,
  type Filter,
  parseFilters,
  passes,
} from "./_catalogue.ts";
import type { Deps } from "../lib/deps.ts";
import { ChosenFilters, countFacets, FacetPanel, NoMatch, SearchBox } from "./_facets.tsx";
import { type ModuleMatch, searchPublished } from "../kv/search/module_search.ts";
import { emptyView } from "./_form.tsx";
import { Select } from "./_form_controls.tsx";
import { UserText } from "./_layout.tsx";
import { ModuleCard } from "./_module_card.tsx";
import { viewer, type WebCtx } from "./_web.tsx";

const PAGE_SIZE = 48;

/** Catalogue pages of signed-out visitors, per counts snapshot and catalogue build. */
const renderedPages = new WeakMap<object, { p: object; pages: Map<string, string> }>();
const KEPT_PAGES = 200;

const SORTS = {
  relevance: "Best match",
  points: "Most points",
  updated: "Recently updated",
  title: "Title (A to Z)",
} as const;

export async function getCatalogue(deps: Deps, c: WebCtx) {
  const f = parseFilters(c.req.query());
  const cat = await catalogue(deps);
  // A signed-out visitor's page depends only on the catalogue, the counts and the filters:
  // it is kept per (catalogue build, counts snapshot), so a repeated view costs no rendering.
  const anonymous = !viewer(c);
  const key = JSON.stringify(f);
  const rendered = keptPagesOf(cat);
  const kept = anonymous ? rendered.get(key) : undefined;
  if (kept !== undefined) return c.html(kept);
  const points = (m: Module) => cat.counts.get(m.slug) ?? 0;
  // The keyword narrows first (ranked, with snippets); the facets count within its matches.
  const found = f.q ? searchPublished(cat.p, f.q) : null;
  const base = found ? found.matches.map((x) => x.m) : cat.p.modules;
  const hits = new Map(found?.matches.map((x) => [x.m.slug, x]) ?? []);
  const sort = f.sort ?? (f.q ? "relevance" : "points");
  const list = ordered(base.filter((m) => passes(m, f)), sort, points, hits);
  const counts = countFacets(cat, base, f);
  const pages = Math.max(1, Math.ceil(list.length / PAGE_SIZE));
  const page = Math.min(f.page, pages);
  const shown = list.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const link = (n: number) =>
    `/catalogue${
      catalogueQuery(f, {
        ...(f.sort ? { sort: f.sort } : {}),
        ...(n > 1 ? { page: String(n) } : {}),
      })
    }`;
  const countWithout = (facet: Facet | "q") => {
    const g = { ...f, [facet]: undefined };
    const b = g.q ? searchPublished(cat.p, g.q).matches.map((x) => x.m) : cat.p.modules;
    return b.filter((m) => passes(m, g)).length;
  };
  const res = await c.render(
    <>
      <h1>Catalogue</h1>
      <p class="lede">
        Every published teaching module. Search it, narrow it by licence, level, subject and more,
        and open a module to read it, see who made it and how you may reuse it.
      </p>
      <SearchBox f={f} />
      {found?.suggestion
        ? (
          <p class="didyoumean">
            Did you mean{" "}
            <a href={`/catalogue${catalogueQuery({ ...f, q: found.suggestion })}`}>
              <UserText>{found.suggestion}</UserText>
            </a>?
          </p>
        )
        : null}
      <div class="catalogue">
        <aside aria-label="Filters">
          <FacetPanel f={f} counts={counts} />
        </aside>
        <div class="results">
          <p role="status">
            {list.length} module{list.length === 1 ? "" : "s"}
            {pages > 1 ? `, page ${page} of ${pages}` : ""}
          </p>
          <ChosenFilters f={f} />
          <h2 class="visually-hidden">Modules</h2>
          <SortForm f={f} sort={sort} />
          {list.length === 0 ? <NoMatch f={f} countWithout={countWithout} /> : (
            <ul class="cards">
              {shown.map((m) => <ModuleCard m={m} points={points(m)} hit={hits.get(m.slug)} />)}
            </ul>
          )}
          <Pager page={page} pages={pages} link={link} />
          <p>
            <a href={`/feed${catalogueQuery(f)}`}>Follow this view (Atom feed)</a>
          </p>
        </div>
      </div>
    </>,
    {
      title: f.q || FACETS.some((facet) => f[facet])
        ? feedTitle(f).replace(/^Modules: /, "Catalogue: ")
        : "Catalogue",
      canonical: `/catalogue${catalogueQuery(f)}`,
      description:
        "Every published module: search it and filter it by licence, level, subject, language, kind, area, track and state.",
      feed: { href: `/feed${catalogueQuery(f)}`, title: feedTitle(f) },
    },
  );
  if (!anonymous) return res;
  const html = await res.text();
  if (rendered.size >= KEPT_PAGES) rendered.clear();
  rendered.set(key, html);
  return c.html(html);
}

/** The signed-out pages kept for this catalogue build and counts snapshot (empty when new). */
function keptPagesOf(cat: Catalogue): Map<string, string> {
  let rendered = renderedPages.get(cat.counts);
  if (!rendered || rendered.p !== cat.p) {
    rendered = { p: cat.p, pages: new Map() };
    renderedPages.set(cat.counts, rendered);
  }
  return rendered.pages;
}

/** The modules in the order chosen: relevance (the keyword's score), points, date or title. */
function ordered(
  list: Module[],
  sort: string,
  points: (m: Module) => number,
  hits: Map<string, ModuleMatch>,
): Module[] {
  return list.sort((a, b) =>
    sort === "relevance"
      ? (hits.get(b.slug)?.score ?? 0) - (hits.get(a.slug)?.score ?? 0)
      : sort === "title"
      ? a.title.localeCompare(b.title)
      : sort === "updated"
      ? b.updated - a.updated
      : points(b) - points(a) || a.title.localeCompare(b.title)
  );
}

/** The order of the list, as a GET form that keeps the filters. */
function SortForm({ f, sort }: { f: Filter; sort: string }) {
  const options = Object.entries(SORTS).filter(([k]) => k !== "relevance" || f.q);
  return (
    <form method="get" action="/catalogue" class="sort">
      {FACETS.filter((facet) => f[facet] !== undefined).map((facet) => (
        <input type="hidden" name={facet} value={f[facet]} />
      ))}
      {f.q ? <input type="hidden" name="q" value={f.q} /> : null}
      <Select name="sort" label="Sort by" view={emptyView({ sort })} options={options} />
      <button type="submit" class="secondary">Sort</button>
    </form>
  );
}

/** Previous and next links of a list in pages (nothing when it fits one page). */
function Pager(
  { page, pages, link }: { page: number; pages: number; link: (n: number) => string },
) {
  return pages > 1
    ? (
      <nav aria-label="Pages">
        <ul class="inline">
          {page > 1
            ? (
              <li>
                <a href={link(page - 1)} rel="prev">Previous page</a>
              </li>
            )
            : null}
          {page < pages
            ? (
              <li>
                <a href={link(page + 1)} rel="next">Next page</a>
              </li>
            )
            : null}
        </ul>
      </nav>
    )
    : null;
}
