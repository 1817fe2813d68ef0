import assert from "node:assert/strict";
import { verifyTrail } from "../kv/store/trail.ts";
import { unpublishModule } from "../kv/catalogue/catalogue_api.ts";
import { seedModule } from "./_catalogue.ts";
import { dumpKv, testApp } from "./_helpers.ts";

Deno.test("profile: PATCH /api/me sets fields, absent stay, empty clears, trail names fields", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada Lovelace" });
  const r = await t.req("PATCH", "/api/me", {
    token,
    body: {
      org: "Analytical Society",
      role: "researcher",
      about: "Notes on engines",
      bio: "Line one\nLine two",
      place: "London",
      contact: " Public@Example.ORG ",
      website: "https://ada.example.org/",
      langs: ["en", "FR", "en"],
    },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.name, "Ada Lovelace");
  assert.deepEqual(r.body.profile, {
    org: "Analytical Society",
    role: "researcher",
    about: "Notes on engines",
    bio: "Line one\nLine two",
    place: "London",
    contact: "public@example.org",
    website: "https://ada.example.org/",
    langs: ["en", "fr"],
  });
  // Absent fields stay; an empty string clears.
  const r2 = await t.req("PATCH", "/api/me", { token, body: { place: "", langs: [] } });
  assert.equal(r2.status, 200);
  assert.equal(r2.body.profile.place, "");
  assert.deepEqual(r2.body.profile.langs, []);
  assert.equal(r2.body.profile.org, "Analytical Society");
  const me = await t.req("GET", "/api/me", { token });
  assert.equal(me.body.profile.org, "Analytical Society");
  assert.equal(me.body.application, null);
  // One trail line per changed field, naming it, never its content.
  const lines: { action: string; fields?: string[] }[] = [];
  for await (const e of t.kv.list<{ action: string; fields?: string[] }>({ prefix: ["trail"] })) {
    if (e.value.action === "profile.update") lines.push(e.value);
  }
  assert.deepEqual(lines.map((l) => l.fields), [
    ["org"],
    ["role"],
    ["about"],
    ["bio"],
    ["place"],
    ["contact"],
    ["website"],
    ["langs"],
    ["place"],
    ["langs"],
  ]);
  const trail = (await dumpKv(t.kv)).split("\n").filter((l) => l.startsWith('["trail",'));
  assert.ok(!trail.some((l) => l.includes("London") || l.includes("Analytical")));
  assert.equal((await verifyTrail(t.kv, true)).ok, true);
  // The same values again change nothing and write no line.
  const before = lines.length;
  await t.req("PATCH", "/api/me", { token, body: { org: "Analytical Society" } });
  let after = 0;
  for await (const e of t.kv.list<{ action: string }>({ prefix: ["trail"] })) {
    if (e.value.action === "profile.update") after++;
  }
  assert.equal(after, before);
  assert.equal(account.id, me.body.id);
});

Deno.test("profile: each invalid field answers 400 naming it and stores nothing", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada Lovelace" });
  const cases: [string, unknown][] = [
    ["name", "A"],
    ["name", "x".repeat(121)],
    ["org", "x".repeat(201)],
    ["role", "pirate"],
    ["about", "x".repeat(281)],
    ["bio", "x".repeat(4001)],
    ["place", "x".repeat(121)],
    ["place", "two\nlines"],
    // A lone surrogate is not text (sign-in refuses it in a name too).
    ["name", "Ada \ud800 Lovelace"],
    ["about", "half a pair \udc00"],
    ["about", "\u{1F331}".repeat(281)],
    ["contact", "not-an-address"],
    ["website", "http://ada.example.org"],
    ["website", "javascript:alert(1)"],
    ["langs", ["en", "xx"]],
    ["langs", "en"],
    ["org", 5],
  ];
  const before = await dumpKv(t.kv);
  for (const [field, value] of cases) {
    const r = await t.req("PATCH", "/api/me", { token, body: { [field]: value } });
    assert.equal(r.status, 400, `${field}=${JSON.stringify(value)}: ${r.text}`);
    assert.equal(r.body.field?.split(".")[0], field, r.text);
    assert.match(r.body.error, new RegExp(`^${field}`));
  }
  const notJson = await t.req("PATCH", "/api/me", {
    token,
    raw: "{",
    headers: { "content-type": "application/json" },
  });
  assert.equal(notJson.status, 400);
  assert.equal(await dumpKv(t.kv), before);
  const anon = await t.req("PATCH", "/api/me", { body: { org: "x" } });
  assert.equal(anon.status, 401);
});

Deno.test("profile: naming gives a unique slug; renaming moves it; clearing hides the profile", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Zoë Smith" });
  const b = await t.account("b@example.org");
  assert.equal(a.account.slug, "zoe-smith");
  const r = await t.req("PATCH", "/api/me", { token: b.token, body: { name: "Zoe Smith" } });
  assert.equal(r.status, 200);
  assert.equal(r.body.slug, "zoe-smith-2");
  const p = await t.req("GET", "/api/profiles/slug/zoe-smith-2");
  assert.equal(p.status, 200);
  assert.equal(p.body.profile.id, b.account.id);
  const r2 = await t.req("PATCH", "/api/me", { token: b.token, body: { name: "Bea Jones" } });
  assert.equal(r2.body.slug, "bea-jones");
  assert.equal((await t.req("GET", "/api/profiles/slug/zoe-smith-2")).status, 404);
  assert.equal((await t.req("GET", "/api/profiles/slug/bea-jones")).status, 200);
  const r3 = await t.req("PATCH", "/api/me", { token: b.token, body: { name: "" } });
  assert.equal(r3.body.name, "");
  assert.equal(r3.body.slug, "");
  assert.equal((await t.req("GET", "/api/profiles/slug/bea-jones")).status, 404);
  assert.equal((await t.req("GET", `/api/profiles/${b.account.id}`)).status, 404);
  assert.equal((await t.kv.get(["accounts_by_slug", "bea-jones"])).value, null);
});

Deno.test("public profile: shape, contact outside, public journal only, never the address", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada Lovelace" });
  await t.req("PATCH", "/api/me", {
    token,
    body: {
      org: "Society",
      contact: "public@example.org",
      website: "https://a.example",
      langs: ["en"],
    },
  });
  await t.req("POST", "/api/me/journal", { token, body: { text: "open note" } });
  await t.req("POST", "/api/me/journal", { token, body: { text: "secret note", public: false } });
  const r = await t.req("GET", `/api/profiles/${account.id}`);
  assert.equal(r.status, 200);
  assert.equal(r.body.ok, true);
  const p = r.body.profile;
  assert.deepEqual(Object.keys(p).sort(), [
    "avatar",
    "contact",
    "id",
    "journal",
    "modules",
    "name",
    "profile",
    "since",
    "slug",
    "standing",
  ]);
  assert.equal(p.since, "2026-03-02");
  assert.equal(p.standing, "collector");
  assert.equal(p.contact, "public@example.org");
  assert.equal(p.avatar, null);
  assert.deepEqual(p.modules, []);
  assert.equal("contact" in p.profile, false);
  assert.deepEqual(p.profile.langs, ["en"]);
  assert.deepEqual(p.journal.map((j: { text: string }) => j.text), ["open note"]);
  assert.deepEqual(Object.keys(p.journal[0]).sort(), ["created", "id", "text", "updated"]);
  assert.ok(!r.text.includes("ada@example.org"));
  const bySlug = await t.req("GET", "/api/profiles/slug/ada-lovelace");
  assert.deepEqual(bySlug.body, r.body);
  // Unnamed accounts have no public profile; unknown ids and slugs answer 404.
  const unnamed = await t.account("u@example.org");
  assert.equal((await t.req("GET", `/api/profiles/${unnamed.account.id}`)).status, 404);
  assert.equal((await t.req("GET", "/api/profiles/999")).status, 404);
  assert.equal((await t.req("GET", "/api/profiles/abc")).status, 404);
  assert.equal((await t.req("GET", "/api/profiles/slug/nobody")).status, 404);
  assert.equal((await t.req("GET", "/api/profiles/slug/Bad%20Slug")).status, 404);
});

Deno.test("profile: two accounts taking the same name at once get different slugs", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org");
  const b = await t.account("b@example.org");
  const [ra, rb] = await Promise.all([
    t.req("PATCH", "/api/me", { token: a.token, body: { name: "Sam Same" } }),
    t.req("PATCH", "/api/me", { token: b.token, body: { name: "Sam Same" } }),
  ]);
  assert.equal(ra.status, 200);
  assert.equal(rb.status, 200);
  assert.deepEqual([ra.body.slug, rb.body.slug].sort(), ["sam-same", "sam-same-2"]);
  assert.equal((await t.req("GET", "/api/search?q=sam")).body.people.length, 2);
});

Deno.test("public profile and search: published modules of the account come from the catalogue", async () => {
  await using t = await testApp();
  const { account } = await t.account("ada@example.org", { name: "Ada Lovelace" });
  await seedModule(t, "pond-life", [account.id]);
  await seedModule(t, "draft-work", [account.id], {
    published: false,
    over: { title: "Pond drafts unseen" },
  });
  const p = await t.req("GET", `/api/profiles/${account.id}`);
  assert.deepEqual(p.body.profile.modules, [{
    title: "Pond life through the seasons",
    slug: "pond-life",
    published: "2026-03-02",
  }]);
  const s = await t.req("GET", "/api/search?q=pond");
  assert.deepEqual(s.body.modules, [{
    field: "lede",
    snippet: "Children sample a school pond four times a year.",
    url: "/modules/pond-life",
    title: "Pond life through the seasons",
    slug: "pond-life",
    name: "Grete Olsen",
  }]);
  // Taken back from the catalogue: gone from search and from the profile at once.
  assert.equal(await unpublishModule(t.deps, "pond-life", "owner"), true);
  assert.deepEqual((await t.req("GET", "/api/search?q=pond")).body.modules, []);
  assert.deepEqual((await t.req("GET", `/api/profiles/${account.id}`)).body.profile.modules, []);
});

Deno.test("profile: limits count characters, not UTF-16 units", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada Lovelace" });
  const r = await t.req("PATCH", "/api/me", {
    token,
    body: { name: "\u{1F331}".repeat(120), about: "\u{1F331}".repeat(280) },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal([...r.body.profile.about].length, 280);
  const long = await t.req("PATCH", "/api/me", { token, body: { name: "\u{1F331}".repeat(121) } });
  assert.equal(long.status, 400);
  assert.equal(long.body.field, "name");
});
