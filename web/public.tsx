/**
 * Public pages that are not the catalogue: public profiles (/people/<slug>), search results
 * (/search), a proposal's status page (/contribute/status, its `status_url`), and the files
 * for search engines (/sitemap.xml, /robots.txt).
 * This file holds the routes; a profile is web/_profile_page.tsx, the search
 * web/_search_page.tsx, a proposal's status web/_proposal_status_page.tsx and its confirmation
 * web/_proposal_confirmed_page.tsx, the files for search engines web/_search_engine_files.ts.
 */
import type { Deps } from "../lib/deps.ts";
import { webRouter } from "./_web.tsx";
import { getPeopleSlug } from "./_profile_page.tsx";
import { getSearch } from "./_search_page.tsx";
import { getContributeStatus } from "./_proposal_status_page.tsx";
import { getContributeConfirmed } from "./_proposal_confirmed_page.tsx";
import { getRobotsTxt, getSitemapXml } from "./_search_engine_files.ts";

export function publicPages(deps: Deps) {
  const app = webRouter();

  app.get("/people/:slug", (c) => getPeopleSlug(deps, c));

  app.get("/search", (c) => getSearch(deps, c));

  // The page a proposal's status_url opens: without the mailed secret (`key`) the state and
  // dates only, never the submitter's address, name or text.
  app.get("/contribute/status", (c) => getContributeStatus(deps, c));

  app.get("/contribute/confirmed", (c) => getContributeConfirmed(deps, c));

  app.get("/robots.txt", (c) => getRobotsTxt(deps, c));

  app.get("/sitemap.xml", (c) => getSitemapXml(deps, c));

  return app;
}
