/**
 * Atom feeds as a feed reader takes them: parsed with a W3C DOM parser, checked against
 * RFC 4287's rules (feed and entry ids, titles, updated, authors, links), for the whole
 * catalogue and a filtered view, linked from the pages' heads; the old addresses redirect.
 * Also the sharing parts of a module page: OpenGraph and Twitter tags, copy link, print style,
 * and /modules leading to the catalogue.
 */
import assert from "node:assert/strict";
import { DOMParser } from "./_dev_deps.ts";
import { seedModule } from "./_catalogue.ts";
import { testApp } from "./_helpers.ts";

const ATOM = "http://www.w3.org/2005/Atom";
// deno-lint-ignore no-explicit-any
type Node = any;

function parse(text: string): Node {
  const faults: string[] = [];
  const doc = new DOMParser({
    onError: (level: string, msg: string) => level !== "warning" && faults.push(msg),
  }).parseFromString(text, "application/xml");
  assert.deepEqual(faults, []);
  return doc.documentElement!;
}
const kids = (n: Node, name: string): Node[] =>
  Array.from(n.childNodes).filter((c: Node) => c.namespaceURI === ATOM && c.localName === name);
const only = (n: Node, name: string) => {
  const k = kids(n, name);
  assert.equal(k.length, 1, `one atom:${name}`);
  return k[0];
};
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** RFC 4287 section 4.1.1 and 4.1.2: what a feed and each entry must hold. */
function assertAtom(feed: Node) {
  assert.equal(feed.namespaceURI, ATOM);
  assert.equal(feed.localName, "feed");
  assert.ok(URL.canParse(only(feed, "id").textContent));
  assert.ok(only(feed, "title").textContent);
  assert.match(only(feed, "updated").textContent, RFC3339);
  const feedAuthor = kids(feed, "author").length > 0;
  assert.ok(kids(feed, "link").some((l) => l.getAttribute("rel") === "self"));
  for (const e of kids(feed, "entry")) {
    assert.ok(URL.canParse(only(e, "id").textContent));
    assert.ok(only(e, "title").textContent);
    assert.match(only(e, "updated").textContent, RFC3339);
    assert.ok(feedAuthor || kids(e, "author").length > 0, "an author for every entry");
    for (const a of kids(e, "author")) assert.ok(only(a, "name").textContent);
    // No content with src, so an alternate link or a content element.
    assert.ok(
      kids(e, "link").some((l) => (l.getAttribute("rel") ?? "alternate") === "alternate") ||
        kids(e, "content").length === 1,
    );
  }
}

Deno.test("feeds: Atom of the whole catalogue and of a filtered view, linked from pages", async () => {
  await using t = await testApp();
  const ann = await t.account("ann@example.org", { name: "Ann Example", roles: ["contributor"] });
  await seedModule(t, "pond-life", [ann.account.id], {
    over: { title: "Pond life & <friends>", licence: "CC-BY-4.0", subject: ["s1001"] },
  });
  t.clock.advance(60_000);
  await seedModule(t, "repair-cafe", [ann.account.id], {
    over: { title: "Repair café", area: "technical", track: "Making and repair" },
  });
  await seedModule(t, "hidden", [ann.account.id], { published: false });

  const r = await t.req("GET", "/feed");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type")!, /^application\/atom\+xml/);
  const feed = parse(r.text);
  assertAtom(feed);
  const entries = kids(feed, "entry");
  // Newest change first; the unpublished module is not in it.
  assert.deepEqual(entries.map((e) => only(e, "title").textContent), [
    "Repair café",
    "Pond life & <friends>",
  ]);
  const pond = entries[1];
  assert.equal(only(pond, "id").textContent, "http://test.local/modules/pond-life");
  assert.equal(only(pond, "author").textContent, "Ann Example");
  const licence = kids(pond, "link").find((l) => l.getAttribute("rel") === "license");
  assert.equal(licence.getAttribute("href"), "https://creativecommons.org/licenses/by/4.0/");
  assert.match(only(pond, "rights").textContent, /CC BY 4\.0/);
  assert.equal(only(feed, "updated").textContent, only(entries[0], "updated").textContent);

  const tech = parse((await t.req("GET", "/feed?area=technical")).text);
  assertAtom(tech);
  assert.deepEqual(kids(tech, "entry").map((e) => only(e, "title").textContent), ["Repair café"]);
  assert.equal(
    kids(tech, "link").find((l) => l.getAttribute("rel") === "self").getAttribute("href"),
    "http://test.local/feed?area=technical",
  );
  // An empty view is still a valid feed.
  assertAtom(parse((await t.req("GET", "/feed?area=nowhere")).text));

  for (const old of ["/atom.xml", "/rss"]) {
    const moved = await t.req("GET", `${old}?area=technical`);
    assert.equal(moved.status, 301, old);
    assert.equal(moved.headers.get("location"), "/feed?area=technical");
  }

  // Every public page's head names the catalogue's feed; the catalogue its filtered one.
  const home = await t.req("GET", "/");
  assert.match(
    home.text,
    /<link rel="alternate" type="application\/atom\+xml" title="[^"]+" href="http:\/\/test.local\/feed"/,
  );
  const page = await t.req("GET", "/catalogue?area=technical");
  assert.match(
    page.text,
    /type="application\/atom\+xml"[^>]*href="http:\/\/test.local\/feed\?area=technical"/,
  );
});

Deno.test("sharing: OpenGraph and Twitter tags, copy link, print style, /modules", async () => {
  await using t = await testApp();
  const ann = await t.account("ann@example.org", { name: "Ann Example", roles: ["contributor"] });
  await seedModule(t, "pond-life", [ann.account.id], { over: { licence: "CC-BY-4.0" } });
  const page = await t.req("GET", "/modules/pond-life");
  assert.match(page.text, /<meta property="og:title" content="Pond life through the seasons"/);
  assert.match(page.text, /<meta property="og:type" content="article"/);
  assert.match(
    page.text,
    /<meta property="og:url" content="http:\/\/test.local\/modules\/pond-life"/,
  );
  assert.match(page.text, /<meta property="og:description" content="Children sample/);
  assert.match(page.text, /<meta name="twitter:card" content="summary"/);
  assert.match(page.text, /Copy link/);
  assert.match(page.text, /value="http:\/\/test.local\/modules\/pond-life"/);
  const css = await t.req("GET", page.text.match(/href="(\/static\/site\.css\?v=[^"]+)"/)![1]);
  assert.match(css.text, /@media print/);
  for (const path of ["/modules", "/modules/"]) {
    const r = await t.req("GET", path);
    assert.equal(r.status, 301, path);
    assert.equal(r.headers.get("location"), "/catalogue");
  }
});
