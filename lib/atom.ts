/**
 * An Atom 1.0 feed (RFC 4287) as text: the feed's id, title, updated, author and links, and an
 * entry per item with its id, title, published, updated, link and plain-text content. Every
 * text and attribute is escaped for XML, and characters XML 1.0 does not allow are dropped.
 */

interface AtomEntry {
  /** A permanent IRI (a tag: URI): it must not change when the page's address does. */
  id: string;
  title: string;
  published: number;
  updated: number;
  link: string;
  /** Plain text; line breaks kept. */
  content: string;
  categories?: string[];
}

interface AtomFeed {
  id: string;
  title: string;
  /** The feed's own address (rel="self") and the page it follows (rel="alternate"). */
  self: string;
  alternate: string;
  author: string;
  /** When the feed last changed; the newest entry's update, or the given time without any. */
  updated: number;
  entries: AtomEntry[];
}

/** Characters outside XML 1.0's Char production (controls but tab and line ends, surrogates). */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlEscape(text: string): string {
  return text.replace(NOT_XML, "").replace(/&/g, "&amp;").replace(/</g, "&lt;")
    .replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

const date = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export function atomFeed(f: AtomFeed): string {
  const e = xmlEscape;
  const updated = Math.max(f.updated, ...f.entries.map((x) => x.updated));
  const entries = f.entries.map((x) =>
    [
      "<entry>",
      `<id>${e(x.id)}</id>`,
      `<title type="text">${e(x.title)}</title>`,
      `<published>${date(x.published)}</published>`,
      `<updated>${date(x.updated)}</updated>`,
      `<link rel="alternate" type="text/html" href="${e(x.link)}"/>`,
      ...(x.categories ?? []).map((c) => `<category term="${e(c)}"/>`),
      `<content type="text">${e(x.content)}</content>`,
      "</entry>",
    ].join("")
  );
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `<id>${e(f.id)}</id>`,
    `<title type="text">${e(f.title)}</title>`,
    `<updated>${date(updated)}</updated>`,
    `<author><name>${e(f.author)}</name></author>`,
    `<link rel="self" type="application/atom+xml" href="${e(f.self)}"/>`,
    `<link rel="alternate" type="text/html" href="${e(f.alternate)}"/>`,
    ...entries,
    "</feed>",
    "",
  ].join("\n");
}

/** A tag: URI (RFC 4151) under the site's host, dated, for ids that outlive addresses. */
export function tagUri(baseUrl: string, day: string, specific: string): string {
  return `tag:${new URL(baseUrl).hostname},${day}:${specific}`;
}
