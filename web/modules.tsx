/**
 * The catalogue (/catalogue: keyword, facets with counts, sort) and each module's page at its
 * `url` (/modules/<slug>), with its licence, point button, sharing and AMB JSON-LD.
 */
import { type Account, getAccount } from "../kv/accounts/accounts.ts";
import type { Module } from "../kv/catalogue/modules.ts";
import { pointKey, togglePoint } from "../kv/catalogue/points.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { displayText } from "../lib/display.ts";
import { fail } from "../http/errors.ts";
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
import { ChosenFilters, countFacets, FacetPanel, NoMatch, SearchBox } from "./_facets.tsx";
import { type ModuleMatch, searchPublished } from "../kv/search/module_search.ts";
import { licenceOf, NO_LICENCE } from "../lib/learning.ts";
import { ambRecord } from "../kv/catalogue/amb.ts";
import { type Material, readableSize, readableType } from "../kv/catalogue/materials.ts";
import { learningOf } from "../lib/learning.ts";
import { LearningRows, LicenceBadge } from "./_learning.tsx";
import { emptyView, Select } from "./_form.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { seeOther, viewer, type WebCtx, webRouter } from "./_web.tsx";

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

/** One module in a list. */
/** What a point is, where points are counted. */
const POINT_WORDS =
  "A point is one signed-in person saying the module is useful; each person gives a module at most one, and can take it back.";

export function ModuleCard(props: { m: Module; points: number; hit?: ModuleMatch }) {
  const { m, hit } = props;
  return (
    <li>
      <h3>
        <a href={`/modules/${m.slug}`}>
          <UserText>{m.title}</UserText>
        </a>
      </h3>
      {hit && hit.field !== "lede" && hit.field !== "title" && hit.field !== "people"
        ? (
          <p class="snippet">
            <Marked text={hit.snippet} marks={hit.marks} />
          </p>
        )
        : (
          <p>
            {hit?.field === "lede"
              ? <Marked text={hit.snippet} marks={hit.marks} />
              : <UserText>{m.lede}</UserText>}
          </p>
        )}
      <p class="meta">
        <LicenceTag licence={m.licence} />
        <span class="tag">{m.state}</span> <UserText>{m.area}</UserText>
        {m.track
          ? (
            <>
              {" · "}
              <UserText>{m.track}</UserText>
            </>
          )
          : null} · {props.points} point
        {props.points === 1 ? "" : "s"} · updated {isoDate(m.updated)}
      </p>
    </li>
  );
}

async function getCatalogue(deps: Deps, c: WebCtx) {
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

async function getModulesSlug(deps: Deps, c: WebCtx) {
  const cat = await catalogue(deps);
  const m = cat.bySlug.get(c.req.param("slug")!);
  if (!m) fail(404, "There is no published module at this address.");
  const me = viewer(c);
  const [people, mine] = await Promise.all([
    contributorsOf(deps, m),
    me ? deps.kv.get(pointKey(m.slug, me.id)).then((e) => e.value !== null) : false,
  ]);
  const points = cat.counts.get(m.slug) ?? 0;
  const url = `${deps.config.baseUrl}/modules/${m.slug}`;
  return c.render(
    <ModulePage m={m} people={people} points={points} mine={mine} signedIn={!!me} url={url} />,
    {
      title: displayText(m.title),
      description: displayText(m.lede),
      canonical: `/modules/${m.slug}`,
      jsonLd: learningResource(deps, m, people, url),
      ogType: "article",
    },
  );
}

async function postModulesSlugPoint(deps: Deps, c: WebCtx) {
  const slug = c.req.param("slug")!;
  const me = viewer(c);
  if (!me) return seeOther(c, `/sign-in?next=${encodeURIComponent(`/modules/${slug}`)}`);
  const r = await togglePoint(deps.kv, slug, me.id, deps.clock.now());
  if (!r.ok && r.reason === "limited") {
    fail(429, `too many point changes: at most ${RULES.points.max} an hour`, {}, {
      "Retry-After": String(r.retryAfter),
    });
  }
  if (!r.ok) fail(404, "There is no published module at this address.");
  return seeOther(c, `/modules/${slug}#points`);
}

export function modulePages(deps: Deps) {
  const app = webRouter();

  app.get("/catalogue", (c) => getCatalogue(deps, c));

  // The list of modules is the catalogue.
  app.get("/modules", (c) => c.redirect("/catalogue", 301));
  app.get("/modules/", (c) => c.redirect("/catalogue", 301));

  app.get("/modules/:slug", (c) => getModulesSlug(deps, c));

  app.post("/modules/:slug/point", (c) => postModulesSlugPoint(deps, c));

  return app;
}

interface Person {
  id: number;
  name: string;
  slug: string;
}

/** The contributors with their names and profile paths (unnamed accounts have none). */
async function contributorsOf(deps: Deps, m: Module): Promise<Person[]> {
  const found = await Promise.all(m.contributors.map((id) => getAccount(deps.kv, id)));
  return found.map((e) => e.value).filter((a): a is Account => !!a && !!a.name)
    .map((a) => ({ id: a.id, name: a.name, slug: a.slug }));
}

/** The module's AMB record (kv/catalogue/amb.ts), its creators the named contributors. */
function learningResource(deps: Deps, m: Module, people: Person[], url: string) {
  return ambRecord(m, {
    url,
    baseUrl: deps.config.baseUrl,
    parts: partsOf(m, deps.config.baseUrl),
    creators: people.map((p) => ({
      name: p.name,
      url: p.slug ? `${deps.config.baseUrl}/people/${p.slug}` : undefined,
    })),
  });
}

/** A fact's value: an https address is a link (a proposal's files become facts). */
function FactValue({ value }: { value: string }) {
  return /^https:\/\/\S+$/.test(value) && URL.canParse(value)
    ? (
      <a href={value}>
        <UserText>{value}</UserText>
      </a>
    )
    : <UserText>{value}</UserText>;
}

function ModulePage(
  props: {
    m: Module;
    people: Person[];
    points: number;
    mine: boolean;
    signedIn: boolean;
    url: string;
  },
) {
  const { m, people } = props;
  return (
    <article>
      <h1>
        <UserText>{m.title}</UserText>
      </h1>
      <p class="lede">
        <UserText>{m.lede}</UserText>
      </p>
      <LicenceBadge title={m.title} by={m.by} licence={m.licence} />
      <dl>
        <dt>State</dt>
        <dd>{m.state}</dd>
        {m.who
          ? (
            <>
              <dt>For</dt>
              <dd>
                <UserText>{m.who}</UserText>
              </dd>
            </>
          )
          : null}
        <LearningRows l={learningOf(m)} />
        <dt>Area</dt>
        <dd>
          <a href={`/catalogue?area=${encodeURIComponent(m.area)}`}>
            <UserText>{m.area}</UserText>
          </a>
        </dd>
        {m.track
          ? (
            <>
              <dt>Track</dt>
              <dd>
                <a href={`/catalogue?track=${encodeURIComponent(m.track)}`}>
                  <UserText>{m.track}</UserText>
                </a>
              </dd>
            </>
          )
          : null}
        <dt>By</dt>
        <dd>
          <UserText>{m.by}</UserText>
        </dd>
        {m.meta
          ? (
            <>
              <dt>Details</dt>
              <dd>
                <UserText>{m.meta}</UserText>
              </dd>
            </>
          )
          : null}
        <dt>Updated</dt>
        <dd>
          <time datetime={isoDate(m.updated)}>{isoDate(m.updated)}</time>
        </dd>
        {m.facts.map(([label, value]) => (
          <>
            <dt>
              <UserText>{label}</UserText>
            </dt>
            <dd>
              <FactValue value={value} />
            </dd>
          </>
        ))}
      </dl>
      <Materials list={m.materials ?? []} />
      <h2>About</h2>
      {m.about.split(/\n{2,}/).map((para) => (
        <p>
          <UserText>{para}</UserText>
        </p>
      ))}
      {m.gets.length
        ? (
          <>
            <h2>What you get</h2>
            <ul>
              {m.gets.map((g) => (
                <li>
                  <UserText>{g}</UserText>
                </li>
              ))}
            </ul>
          </>
        )
        : null}
      {m.note
        ? (
          <>
            <h2>Note</h2>
            <p>
              <UserText>{m.note}</UserText>
            </p>
          </>
        )
        : null}
      <h2>Contributors</h2>
      {people.length
        ? (
          <ul>
            {people.map((p) => (
              <li>
                {p.slug
                  ? (
                    <a href={`/people/${p.slug}`}>
                      <UserText>{p.name}</UserText>
                    </a>
                  )
                  : <UserText>{p.name}</UserText>}
              </li>
            ))}
          </ul>
        )
        : <p>No named contributors yet.</p>}
      <h2 id="points">Points</h2>
      <p>
        {props.points} point{props.points === 1 ? "" : "s"}
        {props.mine ? ", one of them yours" : ""}.
      </p>
      <p class="hint">{POINT_WORDS}</p>
      {props.signedIn
        ? (
          <PostButton
            action={`/modules/${m.slug}/point`}
            kind={props.mine ? "secondary" : undefined}
            block
          >
            {props.mine ? "Withdraw my point" : "Give a point"}
          </PostButton>
        )
        : (
          <p>
            <a href={`/sign-in?next=${encodeURIComponent(`/modules/${m.slug}`)}`}>
              Sign in to give a point
            </a>
          </p>
        )}
      <h2>Share</h2>
      <div class="field share">
        <label for="page-link">Link to this module</label>
        <input id="page-link" type="text" readonly value={props.url} />
        <button type="button" data-copy="#page-link" hidden>Copy link</button>
      </div>
      <p class="noprint">
        <a href={`/request?kind=report&module=${m.slug}`}>Report a problem with this module</a>
        {" · "}
        <a href={`/request?kind=contribute&module=${m.slug}`}>Offer to help with it</a>
      </p>
    </article>
  );
}

export type { WebCtx };

/** A text with its matched words marked. */
function Marked({ text, marks }: { text: string; marks: [number, number][] }) {
  const parts: (string | [string])[] = [];
  let at = 0;
  for (const [a, b] of marks) {
    if (a < at) continue;
    parts.push(text.slice(at, a), [text.slice(a, b)]);
    at = b;
  }
  parts.push(text.slice(at));
  return (
    <bdi>
      {parts.map((p) => typeof p === "string" ? p : <mark>{p[0]}</mark>)}
    </bdi>
  );
}

/** A module's licence in a list: its short name, or that none is stated. */
function LicenceTag({ licence }: { licence: string | null }) {
  const l = licenceOf(licence);
  return (
    <>
      <span class={l?.url ? "tag open" : "tag"}>{l ? l.short : NO_LICENCE}</span>
      {" "}
    </>
  );
}

/** A module's materials as parts of its record: absolute addresses. */
function partsOf(m: Module, base: string) {
  return (m.materials ?? []).map((x) => ({
    name: x.label,
    url: x.url.startsWith("/") ? `${base}${x.url}` : x.url,
    type: x.type ?? undefined,
    size: x.size ?? undefined,
  }));
}

/** The materials: each a link with its kind and size. */
function Materials({ list }: { list: Material[] }) {
  if (list.length === 0) return null;
  return (
    <>
      <h2>Materials</h2>
      <ul class="materials">
        {list.map((x) => (
          <li>
            <a href={x.url}>
              <UserText>{x.label}</UserText>
            </a>{" "}
            <span class="meta">
              {readableType(x.type, x.url)}
              {x.size !== null ? `, ${readableSize(x.size)}` : ""}
            </span>
          </li>
        ))}
      </ul>
    </>
  );
}
