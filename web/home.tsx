/** The home page: a search field, the newest and most-pointed modules, and the ways in. */
import type { Deps } from "../lib/deps.ts";
import { catalogue } from "./_catalogue.ts";
import { SITE_NAME } from "./_layout.tsx";
import { ModuleCard } from "./modules.tsx";
import { viewer, webRouter } from "./_web.tsx";

const SHOWN = 6;

export function homePages(deps: Deps) {
  const app = webRouter();

  app.get("/", async (c) => {
    const cat = await catalogue(deps);
    const points = (slug: string) => cat.counts.get(slug) ?? 0;
    const newest = [...cat.p.modules]
      .sort((a, b) => (b.published_at ?? b.updated) - (a.published_at ?? a.updated))
      .slice(0, SHOWN);
    const top = [...cat.p.modules].filter((m) => points(m.slug) > 0)
      .sort((a, b) => points(b.slug) - points(a.slug) || a.title.localeCompare(b.title))
      .slice(0, SHOWN);
    return c.render(
      <>
        <h1>{SITE_NAME}</h1>
        {c.req.query("signed-out") === "1" && !c.get("account")
          ? <p class="notice" role="status">You are signed out.</p>
          : null}
        {viewer(c) ? null : (
          <p>
            Signed in, you can also watch your websites, servers and cron jobs here: their state,
            uptime and response times on one screen, alerts by mail when they go down, and a public
            status page.
          </p>
        )}
        <p>
          Teaching modules made and kept by a community of teachers and contributors:{" "}
          {cat.p.modules.length} published so far.
        </p>
        <form method="get" action="/search" role="search" class="search">
          <label for="home-q">Search modules, people and journals</label>
          <input id="home-q" type="search" name="q" maxlength={200} />
          <button type="submit">Search</button>
        </form>
        <ul class="actions">
          <li>
            <a href="/catalogue">Browse the catalogue</a>
          </li>
          <li>
            <a href="/request">Request a module</a>
          </li>
          <li>
            <a href="/contribute">Propose a module</a>
          </li>
          {viewer(c)
            ? (
              <li>
                <a href="/watch">Watching: your services, their state and uptime</a>
              </li>
            )
            : (
              <li>
                <a href="/sign-in">Sign in with your e-mail address</a>
              </li>
            )}
        </ul>
        <h2>Newest modules</h2>
        {newest.length
          ? (
            <ul class="cards">
              {newest.map((m) => <ModuleCard m={m} points={points(m.slug)} />)}
            </ul>
          )
          : <p>None published yet.</p>}
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
      </>,
      { title: SITE_NAME, canonical: "/", description: "A community catalogue of modules." },
    );
  });

  return app;
}
