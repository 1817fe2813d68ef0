/**
 * The files for search engines: /robots.txt (what not to crawl) and /sitemap.xml (the public
 * pages, every published module and the profiles of its named contributors).
 */
import { isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { catalogue } from "./_catalogue.ts";
import { profileSlugsOf } from "./_profile_page.tsx";
import type { WebCtx } from "./_web.tsx";

export function getRobotsTxt(deps: Deps, c: WebCtx) {
  c.header("Content-Type", "text/plain; charset=utf-8");
  return c.body(
    "User-agent: *\nDisallow: /me\nDisallow: /team\nDisallow: /sign-in\nDisallow: /search\n" +
      "Disallow: /contribute/status\nDisallow: /api/\n" +
      `Sitemap: ${deps.config.baseUrl}/sitemap.xml\n`,
  );
}

export async function getSitemapXml(deps: Deps, c: WebCtx) {
  const cat = await catalogue(deps);
  const people = new Set<number>(cat.p.modules.flatMap((m) => m.contributors));
  const slugs = await profileSlugsOf(deps, [...people]);
  const base = deps.config.baseUrl;
  const esc = (s: string) => s.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  const urls = [
    `<url><loc>${esc(base)}/</loc></url>`,
    `<url><loc>${esc(base)}/catalogue</loc></url>`,
    `<url><loc>${esc(base)}/request</loc></url>`,
    `<url><loc>${esc(base)}/contribute</loc></url>`,
    `<url><loc>${esc(base)}/api-reference</loc></url>`,
    ...cat.p.modules.map((m) =>
      `<url><loc>${esc(`${base}/modules/${m.slug}`)}</loc><lastmod>${
        isoDate(m.updated)
      }</lastmod></url>`
    ),
    ...[...slugs.values()].map((s) => `<url><loc>${esc(`${base}/people/${s}`)}</loc></url>`),
  ];
  c.header("Content-Type", "application/xml; charset=utf-8");
  return c.body(
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${
        urls.join("\n")
      }\n</urlset>\n`,
  );
}
