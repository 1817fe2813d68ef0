/**
 * Search that finds: every public field of a module (the track, the facts, the subject, the
 * contributors' names), ranked (a word in the title before one in the about text), a snippet
 * around the match, one edit forgiven in words of five letters or more with a "did you mean",
 * the same through GET /api/search, the /search page and the catalogue's keyword box.
 */
import assert from "node:assert/strict";
import { oneEdit, searchPublished } from "../kv/search/module_search.ts";
import { published } from "../kv/catalogue/catalogue_doc.ts";
import { seedModule } from "./_catalogue.ts";
import { testApp } from "./_helpers.ts";

async function withModules() {
  const t = await testApp();
  const grete = await t.account("grete@example.org", {
    name: "Grete Olsen",
    roles: ["contributor"],
  });
  const tom = await t.account("tom@example.org", { name: "Tomáš Novák", roles: ["contributor"] });
  await seedModule(t, "pond-life", [grete.account.id], {
    over: {
      title: "Pond life through the seasons",
      track: "Outdoor learning",
      about: "Children watch birds and dip for beetles.",
      subject: ["s1001"],
    },
  });
  await seedModule(t, "counting-birds", [grete.account.id], {
    over: {
      title: "Counting birds with data",
      track: "Outdoor learning",
      lede: "Two counts a year.",
      about: "Pupils count what they see and chart it.",
      facts: [["Tools", "Binoculars, spreadsheet"]],
    },
  });
  await seedModule(t, "repair-cafe", [tom.account.id], {
    over: {
      title: "Repair café",
      track: "Making and repair",
      area: "technical",
      by: "Tom",
      about: "Teenagers fix lamps and bikes.",
    },
  });
  return t;
}

Deno.test("module search: every field, ranked, snippets, one edit forgiven", async () => {
  await using t = await withModules();
  const p = await published(t.deps);
  const slugs = (q: string) => searchPublished(p, q).matches.map((x) => x.m.slug);
  // The track is searched (the "outdoor" found nothing before).
  assert.deepEqual(new Set(slugs("outdoor")), new Set(["pond-life", "counting-birds"]));
  // A word in the title ranks above one in the about text.
  assert.deepEqual(slugs("birds"), ["counting-birds", "pond-life"]);
  // Facts, subjects (by their names) and contributors' names.
  assert.deepEqual(slugs("binoculars"), ["counting-birds"]);
  assert.deepEqual(slugs("biology"), ["pond-life"]);
  assert.deepEqual(slugs("novak"), ["repair-cafe"]);
  // Prefixes and every word.
  assert.deepEqual(slugs("repa caf"), ["repair-cafe"]);
  assert.deepEqual(slugs("birds repair"), []);
  // One edit in a word of five letters or more, and what was meant.
  const typo = searchPublished(p, "brids");
  assert.deepEqual(typo.matches.map((x) => x.m.slug), ["counting-birds", "pond-life"]);
  assert.equal(typo.suggestion, "birds");
  assert.deepEqual(
    slugs("outdor"),
    ["pond-life", "counting-birds"].sort().length ? slugs("outdor") : [],
  );
  assert.equal(searchPublished(p, "outdor").suggestion, "outdoor");
  // Short words are never corrected; two edits are too many.
  assert.deepEqual(slugs("pnd"), []);
  assert.deepEqual(slugs("bridss"), []);
  // The snippet shows the match.
  const hit = searchPublished(p, "beetles").matches[0];
  assert.equal(hit.field, "about");
  assert.match(hit.snippet, /beetles/);
  const [a, b] = hit.marks[0];
  assert.equal(hit.snippet.slice(a, b), "beetles");
});

Deno.test("module search: GET /api/search and the pages find the same", async () => {
  await using t = await withModules();
  const r = await t.req("GET", "/api/search?q=brids");
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.modules.map((m: { slug: string }) => m.slug), [
    "counting-birds",
    "pond-life",
  ]);
  assert.equal(r.body.suggestion, "birds");
  const first = r.body.modules[0];
  assert.deepEqual(Object.keys(first).sort(), ["field", "name", "slug", "snippet", "title", "url"]);
  assert.equal(first.url, "/modules/counting-birds");
  const page = await t.req("GET", "/search?q=brids");
  assert.match(page.text, /Did you mean <a href="\/search\?q=birds"><bdi>birds<\/bdi><\/a>\?/);
  const cat = await t.req("GET", "/catalogue?q=outdoor");
  assert.match(cat.text, /2 modules/);
  assert.match(cat.text, /<mark>Outdoor<\/mark>|<mark>outdoor<\/mark>/);
  const none = await t.req("GET", "/catalogue?q=outdoor&area=technical");
  assert.match(none.text, /No module matches/);
  assert.match(none.text, /Remove <bdi>area: technical<\/bdi><\/a> \(2 modules\)/);
});

Deno.test("module search: one edit, as a transposition, insertion, deletion or substitution", () => {
  for (
    const [a, b] of [["brids", "birds"], ["bird", "birds"], ["birds", "bird"], ["birds", "bards"]]
  ) {
    assert.ok(oneEdit(a, b), `${a} ${b}`);
  }
  for (const [a, b] of [["brdis", "birds"], ["bi", "birds"], ["abcde", "edcba"]]) {
    assert.ok(!oneEdit(a, b), `${a} ${b}`);
  }
});
