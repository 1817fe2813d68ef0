/**
 * Atom 1.0 feeds (RFC 4287) of new and changed modules: `/feed` for the whole catalogue and for
 * any filtered view (the catalogue's own query: `/feed?area=nature-based&licence=CC-BY-4.0`),
 * linked from each page's head. `/atom.xml` and `/rss` are the addresses feed readers try first:
 * they answer 301 to `/feed`, the query kept. Read from the cached catalogue build.
 */
import { catalogue } from "./_catalogue.ts";
import { catalogueQuery, feedTitle, filterModules, parseFilters } from "./_catalogue.ts";
import { labelOf, learningOf, licenceOf } from "../lib/learning.ts";
import { iso } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { changedAt, type Module } from "../kv/catalogue/modules.ts";
import { PUBLISHER_NAME } from "../kv/catalogue/amb.ts";
import { el, empty } from "../lib/xml.ts";
import { type WebCtx, webRouter } from "./_web.tsx";

/** Entries in a feed: the most recently changed modules. */
const FEED_ENTRIES = 50;

const ATOM = "http://www.w3.org/2005/Atom";

function entry(m: Module, base: string, names: Map<number, string>): string {
  const url = `${base}/modules/${m.slug}`;
  const l = learningOf(m);
  const licence = licenceOf(l.licence);
  const authors = m.contributors.map((id) => names.get(id) ?? "").filter(Boolean);
  const people = authors.length ? authors : m.by ? [m.by] : [];
  const categories = [
    m.area
      ? empty("category", { term: m.area, scheme: `${base}/catalogue?area=`, label: m.area })
      : "",
    m.track
      ? empty("category", { term: m.track, scheme: `${base}/catalogue?track=`, label: m.track })
      : "",
    ...l.subject.map((s) =>
      empty("category", {
        term: s,
        scheme: "http://w3id.org/kim/schulfaecher/",
        label: labelOf("subject", s),
      })
    ),
  ];
  return [
    "<entry>",
    el("id", url),
    el("title", m.title),
    empty("link", { rel: "alternate", type: "text/html", href: url }),
    el("updated", iso(changedAt(m))),
    m.published_at ? el("published", iso(m.published_at)) : "",
    ...people.map((name) => `<author>${el("name", name)}</author>`),
    ...categories,
    el("summary", m.lede || m.title),
    el("content", m.about || m.lede),
    licence?.url ? empty("link", { rel: "license", type: "text/html", href: licence.url }) : "",
    ...(m.materials ?? []).map((x) => {
      const href = x.url.startsWith("/") ? `${base}${x.url}` : x.url;
      return x.type
        ? empty("link", {
          rel: "enclosure",
          href,
          type: x.type,
          title: x.label,
          ...(x.size !== null ? { length: String(x.size) } : {}),
        })
        : empty("link", { rel: "related", href, title: x.label });
    }),
    el(
      "rights",
      licence
        ? (licence.url ? `${licence.short}: ${licence.url}` : licence.short)
        : "Licence not stated",
    ),
    "</entry>",
  ].join("");
}

async function getFeed(deps: Deps, c: WebCtx) {
  const f = parseFilters(c.req.query());
  const cat = await catalogue(deps);
  const base = deps.config.baseUrl;
  const list = filterModules(cat, f).sort((a, b) =>
    changedAt(b) - changedAt(a) || a.slug.localeCompare(b.slug)
  )
    .slice(0, FEED_ENTRIES);
  const q = catalogueQuery(f);
  const self = `${base}/feed${q}`;
  const updated = list.length ? iso(changedAt(list[0])) : iso(cat.p.built);
  const xml = [
    `<?xml version="1.0" encoding="utf-8"?>\n`,
    `<feed xmlns="${ATOM}" xml:lang="en">`,
    el("id", self),
    el("title", feedTitle(f)),
    el("subtitle", "New and changed modules of the catalogue"),
    empty("link", { rel: "self", type: "application/atom+xml", href: self }),
    empty("link", { rel: "alternate", type: "text/html", href: `${base}/catalogue${q}` }),
    el("updated", updated),
    `<author>${el("name", PUBLISHER_NAME)}${el("uri", `${base}/`)}</author>`,
    el("generator", PUBLISHER_NAME),
    ...list.map((m) => entry(m, base, cat.p.names)),
    "</feed>\n",
  ].join("");
  c.header("Content-Type", "application/atom+xml; charset=utf-8");
  c.header("Cache-Control", "public, max-age=300");
  return c.body(xml);
}

export function feedPages(deps: Deps) {
  const app = webRouter();
  app.get("/feed", (c) => getFeed(deps, c));
  for (const path of ["/atom.xml", "/rss", "/rss.xml", "/feed.xml"]) {
    app.get(path, (c) => {
      const q = new URL(c.req.url).search;
      return c.redirect(`/feed${q}`, 301);
    });
  }
  return app;
}
