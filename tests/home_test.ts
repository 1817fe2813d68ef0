/**
 * The first page for each reader: teachers get the catalogue's search and its ways in
 * (subjects, levels, licences with counts) before anything else; watching has an entry of its
 * own further down; an empty catalogue tells whoever runs the site how to fill it.
 */
import assert from "node:assert/strict";
import { seedModule } from "./_catalogue.ts";
import { testApp } from "./_helpers.ts";

Deno.test("home: a fresh install says how to load the examples or import a catalogue", async () => {
  await using t = await testApp();
  const home = await t.req("GET", "/");
  assert.equal(home.status, 200);
  assert.match(home.text, /No modules are published yet/);
  assert.match(home.text, /<code>deno task demo<\/code>/);
  assert.match(home.text, /<code>deno task catalogue import catalogue.json<\/code>/);
  assert.match(home.text, /<a href="\/contribute">propose a module<\/a>/);
  assert.doesNotMatch(home.text, /0 published so far[^<]*<\/p><p>None published/);
});

Deno.test("home: the catalogue leads; watching has its own entry below", async () => {
  await using t = await testApp();
  const ann = await t.account("ann@example.org", { name: "Ann", roles: ["contributor"] });
  await seedModule(t, "pond-life", [ann.account.id], {
    over: { subject: ["s1001"], level: ["level_1"], licence: "CC-BY-4.0" },
  });
  const home = (await t.req("GET", "/")).text;
  assert.doesNotMatch(home, /No modules are published yet/);
  const search = home.indexOf('<label for="f-q">Search the catalogue</label>');
  const watching = home.indexOf("Watching websites and servers");
  assert.ok(search > 0 && watching > search, "the catalogue's search comes first");
  assert.ok(home.indexOf("Newest modules") < watching);
  assert.match(home, /<a href="\/catalogue\?subject=s1001"><bdi>Biology<\/bdi> \(1\)<\/a>/);
  assert.match(home, /<a href="\/catalogue\?level=level_1"><bdi>Primary<\/bdi> \(1\)<\/a>/);
  assert.match(home, /<a href="\/catalogue\?licence=CC-BY-4.0"><bdi>CC BY 4.0<\/bdi> \(1\)<\/a>/);
  assert.match(home, /<a href="\/sign-in\?next=%2Fwatch">Sign in to watch your services<\/a>/);
  const { token } = await t.account("w@example.org", { name: "Wanda" });
  const signedIn = (await t.req("GET", "/", { headers: { cookie: `session=${token}` } })).text;
  assert.match(signedIn, /<a href="\/watch">Watching: your services/);
});
