/**
 * The catalogue (/catalogue, with filters and sort) and each module's page at its `url`
 * (/modules/<slug>), with its point button for signed-in accounts and schema.org JSON-LD.
 */
import { z } from "zod";
import { type Account, getAccount } from "../kv/accounts.ts";
import { type Module, STATES } from "../kv/modules.ts";
import { pointKey, togglePoint } from "../kv/points.ts";
import { RULES } from "../kv/rate_limit.ts";
import { isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { displayText } from "../lib/display.ts";
import { fail } from "../http/errors.ts";
import { type Catalogue, catalogue } from "./_catalogue.ts";
import { ambRecord } from "../kv/amb.ts";
import { learningOf } from "../lib/learning.ts";
import { LearningRows, LicenceBadge } from "./_learning.tsx";
import { emptyView, type FormView, Select } from "./_form.tsx";
import { U } from "./_layout.tsx";
import { seeOther, viewer, type WebCtx, webRouter } from "./_web.tsx";

export const PAGE_SIZE = 48;

/** Catalogue pages of signed-out visitors, per counts snapshot and catalogue build. */
const renderedPages = new WeakMap<object, { p: object; pages: Map<string, string> }>();
const KEPT_PAGES = 200;

const SORTS = {
  points: "Most points",
  updated: "Recently updated",
  title: "Title (A to Z)",
} as const;

const Filters = z.object({
  state: z.enum(STATES).optional().catch(undefined),
  area: z.string().max(120).optional().catch(undefined),
  track: z.string().max(120).optional().catch(undefined),
  sort: z.enum(["points", "updated", "title"]).catch("points"),
  page: z.coerce.number().int().min(1).max(10_000).catch(1),
});

/** One module in a list. */
/** What a point is, where points are counted. */
export const POINT_WORDS =
  "A point is one signed-in person saying the module is useful; each person gives a module at most one, and can take it back.";

export function ModuleCard(props: { m: Module; points: number }) {
  const { m } = props;
  return (
    <li>
      <h3>
        <a href={`/modules/${m.slug}`}>
          <U>{m.title}</U>
        </a>
      </h3>
      <p>
        <U>{m.lede}</U>
      </p>
      <p class="meta">
        <span class="tag">{m.state}</span> <U>{m.area}</U>
        {m.track
          ? (
            <>
              {" · "}
              <U>{m.track}</U>
            </>
          )
          : null} · {props.points} point
        {props.points === 1 ? "" : "s"} · updated {isoDate(m.updated)}
      </p>
    </li>
  );
}

type Filter = z.infer<typeof Filters>;

async function getCatalogue(deps: Deps, c: WebCtx) {
  const f = Filters.parse(c.req.query());
  const cat = await catalogue(deps);
  // A signed-out visitor's page depends only on the catalogue, the counts and the filters:
  // it is kept per (catalogue build, counts snapshot), so a repeated view costs no rendering.
  const anonymous = !viewer(c);
  const key = JSON.stringify(f);
  const rendered = keptPagesOf(cat);
  const kept = anonymous ? rendered.get(key) : undefined;
  if (kept !== undefined) return c.html(kept);
  const points = (m: Module) => cat.counts.get(m.slug) ?? 0;
  const list = filtered(cat, f, points);
  const pages = Math.max(1, Math.ceil(list.length / PAGE_SIZE));
  const page = Math.min(f.page, pages);
  const shown = list.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const values = {
    state: f.state ?? "",
    area: f.area ?? "",
    track: f.track ?? "",
    sort: f.sort,
  };
  const link = (n: number) => {
    const q = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ""));
    if (n > 1) q.set("page", String(n));
    return `/catalogue?${q}`;
  };
  const res = await c.render(
    <>
      <h1>Catalogue</h1>
      <p class="lede">
        Every published teaching module. Filter them by state or track, sort them, and open one to
        read it and see who made it.
      </p>
      <CatalogueFilters cat={cat} view={emptyView(values)} />
      <p role="status">
        {list.length} module{list.length === 1 ? "" : "s"}
        {pages > 1 ? `, page ${page} of ${pages}` : ""}
      </p>
      <ul class="cards">
        {shown.map((m) => <ModuleCard m={m} points={points(m)} />)}
      </ul>
      <Pager page={page} pages={pages} link={link} />
    </>,
    {
      title: "Catalogue",
      canonical: "/catalogue",
      description: "Every published module, with filters by state, area and track.",
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

/** The modules the filters keep, in the order chosen. */
function filtered(cat: Catalogue, f: Filter, points: (m: Module) => number): Module[] {
  const list = cat.p.modules.filter((m) =>
    (!f.state || m.state === f.state) && (!f.area || m.area === f.area) &&
    (!f.track || m.track === f.track)
  );
  return [...list].sort((a, b) =>
    f.sort === "title"
      ? a.title.localeCompare(b.title)
      : f.sort === "updated"
      ? b.updated - a.updated
      : points(b) - points(a) || a.title.localeCompare(b.title)
  );
}

function CatalogueFilters({ cat, view }: { cat: Catalogue; view: FormView }) {
  return (
    <form method="get" action="/catalogue" class="filters" aria-label="Filter and sort">
      <Select
        name="state"
        label="State"
        view={view}
        options={[["", "Any state"], ...STATES.map((s) => [s, s] as [string, string])]}
      />
      <Select
        name="area"
        label="Area"
        view={view}
        options={[
          ["", "Any area"],
          ...cat.areas.map((a) => [a, displayText(a)] as [string, string]),
        ]}
      />
      <Select
        name="track"
        label="Track"
        view={view}
        options={[
          ["", "Any track"],
          ...cat.tracks.map((t) => [t, displayText(t)] as [string, string]),
        ]}
      />
      <Select name="sort" label="Sort by" view={view} options={Object.entries(SORTS)} />
      <div class="field">
        <button type="submit">Show</button>
      </div>
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
    <ModulePage m={m} people={people} points={points} mine={mine} signedIn={!!me} />,
    {
      title: displayText(m.title),
      description: displayText(m.lede),
      canonical: `/modules/${m.slug}`,
      jsonLd: learningResource(deps, m, people, url),
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

/** The module's AMB record (kv/amb.ts), its creators the named contributors. */
function learningResource(deps: Deps, m: Module, people: Person[], url: string) {
  return ambRecord(m, {
    url,
    baseUrl: deps.config.baseUrl,
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
        <U>{value}</U>
      </a>
    )
    : <U>{value}</U>;
}

function ModulePage(
  props: { m: Module; people: Person[]; points: number; mine: boolean; signedIn: boolean },
) {
  const { m, people } = props;
  return (
    <article>
      <h1>
        <U>{m.title}</U>
      </h1>
      <p class="lede">
        <U>{m.lede}</U>
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
                <U>{m.who}</U>
              </dd>
            </>
          )
          : null}
        <LearningRows l={learningOf(m)} />
        <dt>Area</dt>
        <dd>
          <a href={`/catalogue?area=${encodeURIComponent(m.area)}`}>
            <U>{m.area}</U>
          </a>
        </dd>
        {m.track
          ? (
            <>
              <dt>Track</dt>
              <dd>
                <a href={`/catalogue?track=${encodeURIComponent(m.track)}`}>
                  <U>{m.track}</U>
                </a>
              </dd>
            </>
          )
          : null}
        <dt>By</dt>
        <dd>
          <U>{m.by}</U>
        </dd>
        {m.meta
          ? (
            <>
              <dt>Details</dt>
              <dd>
                <U>{m.meta}</U>
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
              <U>{label}</U>
            </dt>
            <dd>
              <FactValue value={value} />
            </dd>
          </>
        ))}
      </dl>
      <h2>About</h2>
      {m.about.split(/\n{2,}/).map((para) => (
        <p>
          <U>{para}</U>
        </p>
      ))}
      {m.gets.length
        ? (
          <>
            <h2>What you get</h2>
            <ul>
              {m.gets.map((g) => (
                <li>
                  <U>{g}</U>
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
              <U>{m.note}</U>
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
                      <U>{p.name}</U>
                    </a>
                  )
                  : <U>{p.name}</U>}
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
          <form method="post" action={`/modules/${m.slug}/point`}>
            <button type="submit" class={props.mine ? "secondary" : undefined}>
              {props.mine ? "Withdraw my point" : "Give a point"}
            </button>
          </form>
        )
        : (
          <p>
            <a href={`/sign-in?next=${encodeURIComponent(`/modules/${m.slug}`)}`}>
              Sign in to give a point
            </a>
          </p>
        )}
      <p>
        <a href={`/request?kind=report&module=${m.slug}`}>Report a problem with this module</a>
        {" · "}
        <a href={`/request?kind=contribute&module=${m.slug}`}>Offer to help with it</a>
      </p>
    </article>
  );
}

export type { WebCtx };
