/** The home page: what the service is, a search field, and the ways in. */
import type { Deps } from "../lib/deps.ts";
import { SITE_NAME } from "./_layout.tsx";
import { webRouter } from "./_web.tsx";

export function homePages(_deps: Deps) {
  const app = webRouter();

  app.get("/", (c) => {
    return c.render(
      <>
        <h1>{SITE_NAME}</h1>
        <p>Teaching modules made and kept by a community of teachers and contributors.</p>
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
        </ul>
      </>,
      { title: SITE_NAME, canonical: "/", description: "A community catalogue of modules." },
    );
  });

  return app;
}
