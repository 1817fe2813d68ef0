/**
 * The home page, for teachers first: the catalogue's search, its subjects, levels and open
 * licences as ways in, the newest and most-pointed modules, and the ways to ask or propose.
 * Watching services has its own entry further down, for those who use it. An empty catalogue
 * tells whoever runs the site how to load the examples or import a catalogue.
 */
import type { Deps } from "../lib/deps.ts";
import { isOwner } from "../kv/accounts/accounts.ts";
import { type Catalogue, catalogue, emptyFilter } from "./_catalogue.ts";
import { countFacets, FACET_LABELS, SearchBox, withFilter } from "./_facets.tsx";
import { SITE_NAME, UserText } from "./_layout.tsx";
import { ModuleCard } from "./_module_card.tsx";
import { valueLabel } from "./_catalogue.ts";
import { viewer, webRouter } from "./_web.tsx";

const SHOWN = 6;

/** A few facets as ways into the catalogue: each value a link with its count. */
function WaysIn({ cat }: { cat: Catalogue }) {
  const f = emptyFilter();
  const counts = countFacets(cat, cat.p.modules, f);
  return (
    <div class="ways-in">
      {(["subject", "level", "licence"] as const).filter((facet) => counts[facet].length > 0)
        .map((facet) => (
          <nav aria-labelledby={`way-${facet}`}>
            <h2 id={`way-${facet}`}>By {FACET_LABELS[facet].toLowerCase()}</h2>
            <ul class="inline">
              {counts[facet].map(([v, n]) => (
                <li>
                  <a href={withFilter(f, facet, v)}>
                    <UserText>{valueLabel(facet, v)}</UserText> ({n})
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ))}
    </div>
  );
}

/** What a fresh install shows instead of modules: how to fill the catalogue. */
function EmptyCatalogue({ owner }: { owner: boolean }) {
  return (
    <section class="notice" aria-labelledby="empty">
      <h2 id="empty">No modules are published yet</h2>
      <p>
        Be the first:{" "}
        <a href="/contribute">propose a module</a>, and the team publishes it once checked.
      </p>
      <p>
        {owner ? "You run this site. " : "Running this site? "}
        Load the example catalogue (five modules by four contributors) with{" "}
        <code>deno task demo</code>, or import your own with{" "}
        <code>deno task catalogue import catalogue.json</code>{" "}
        (the file's form: docs/catalogue-file.md). Both run on the server, beside it.
      </p>
    </section>
  );
}

export function homePages(deps: Deps) {
  const app = webRouter();

  app.get("/", async (c) => {
    const cat = await catalogue(deps);
    const me = viewer(c);
    const points = (slug: string) => cat.counts.get(slug) ?? 0;
    const newest = [...cat.p.modules]
      .sort((a, b) => (b.published_at ?? b.updated) - (a.published_at ?? a.updated))
      .slice(0, SHOWN);
    const top = [...cat.p.modules].filter((m) => points(m.slug) > 0)
      .sort((a, b) => points(b.slug) - points(a.slug) || a.title.localeCompare(b.title))
      .slice(0, SHOWN);
    const count = cat.p.modules.length;
    return c.render(
      <>
        <h1>{SITE_NAME}</h1>
        {c.req.query("signed-out") === "1" && !c.get("account")
          ? <p class="notice" role="status">You are signed out.</p>
          : null}
        <p class="lede">
          Teaching modules made and kept by teachers and contributors, free to read and, under their
          Creative Commons licences, to reuse: {count} published so far.
        </p>
        <SearchBox f={emptyFilter()} />
        <p>
          <a href="/catalogue">Browse the catalogue</a> ·{" "}
          <a href="/search">
            Search people and journals too
          </a>
        </p>
        {count === 0 ? <EmptyCatalogue owner={!!me && isOwner(me)} /> : <WaysIn cat={cat} />}
        {newest.length
          ? (
            <>
              <h2>Newest modules</h2>
              <ul class="cards">
                {newest.map((m) => <ModuleCard m={m} points={points(m.slug)} />)}
              </ul>
            </>
          )
          : null}
        {top.length
          ? (
            <>
              <h2>Most pointed</h2>
              <ul class="cards">
                {top.map((m) => <ModuleCard m={m} points={points(m.slug)} />)}
              </ul>
            </>
          )
          : null}
        <h2>Take part</h2>
        <ul class="actions">
          <li>
            <a href="/request">Request a module</a>
          </li>
          <li>
            <a href="/contribute">Propose a module</a>
          </li>
          {me ? null : (
            <li>
              <a href="/sign-in">Sign in with your e-mail address</a>
            </li>
          )}
        </ul>
        <h2>Watching websites and servers</h2>
        <p>
          The site also watches websites, servers and cron jobs for the people who use it: their
          state, uptime and response times on one screen, alerts when they go down, and a public
          status page.{" "}
          {me
            ? <a href="/watch">Watching: your services, their state and uptime</a>
            : <a href="/sign-in?next=%2Fwatch">Sign in to watch your services</a>}
        </p>
      </>,
      {
        title: SITE_NAME,
        canonical: "/",
        description:
          "A community catalogue of teaching modules: search them, filter them by subject, level and licence, and reuse them.",
      },
    );
  });

  return app;
}
