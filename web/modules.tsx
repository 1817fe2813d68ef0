/**
 * The catalogue (/catalogue: keyword, facets with counts, sort) and each module's page at its
 * `url` (/modules/<slug>), with its licence, point button, sharing and AMB JSON-LD.
 * This file holds the routes; the catalogue is web/_catalogue_page.tsx (its cards
 * web/_module_card.tsx), a module's page web/_module_page.tsx.
 */
import { togglePoint } from "../kv/catalogue/points.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { seeOther, viewer, type WebCtx, webRouter } from "./_web.tsx";
import { getCatalogue } from "./_catalogue_page.tsx";
import { getModulesSlug } from "./_module_page.tsx";

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

export type { WebCtx };
