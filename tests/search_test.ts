import assert from "node:assert/strict";
import { testApp } from "./_helpers.ts";
import { indexChange } from "../kv/search/search_index.ts";
import { atomic, commit, openKv } from "../kv/_atomic.ts";
import { addEntry, updateEntry } from "../kv/accounts/journal.ts";
import { updateProfile } from "../kv/accounts/profile.ts";

type Hit = { id: number; name: string };

Deno.test("search: people by name, org and about; accent and case folded; prefix words", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Zoë Müller" });
  await t.req("PATCH", "/api/me", {
    token: a.token,
    body: { org: "Gärtnerei Nord", about: "Teaching gardening", role: "teacher" },
  });
  await t.account("b@example.org", { name: "Bob Stone" });
  await t.account("u@example.org"); // unnamed: never found
  const r = await t.req("GET", "/api/search?q=zoe%20MULL");
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.ok, true);
  assert.deepEqual(r.body.people, [{
    id: a.account.id,
    name: "Zoë Müller",
    org: "Gärtnerei Nord",
    role: "teacher",
    about: "Teaching gardening",
  }]);
  assert.deepEqual(r.body.journal, []);
  assert.deepEqual(r.body.modules, []);
  assert.equal((await t.req("GET", "/api/search?q=gartn")).body.people.length, 1);
  assert.equal((await t.req("GET", "/api/search?q=garden")).body.people.length, 1);
  assert.equal((await t.req("GET", "/api/search?q=zoe%20stone")).body.people.length, 0);
  assert.equal((await t.req("GET", "/api/search?q=stone")).body.people[0].name, "Bob Stone");
  // Text of the sign-in address is not searchable.
  assert.equal((await t.req("GET", "/api/search?q=example")).body.people.length, 0);
});

Deno.test("search: results change atomically with the records", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ada Lovelace" });
  const e = await t.req("POST", "/api/me/journal", {
    token: a.token,
    body: { text: "Thinking about analytical engines" },
  });
  const q = async (s: string) =>
    (await t.req("GET", `/api/search?q=${encodeURIComponent(s)}`)).body;
  const r = await q("analytic");
  assert.equal(r.journal.length, 1);
  assert.deepEqual(Object.keys(r.journal[0]).sort(), ["actor_id", "created", "id", "name", "text"]);
  assert.equal(r.journal[0].actor_id, a.account.id);
  assert.equal(r.journal[0].name, "Ada Lovelace");
  // Made private: gone at once; public again: back.
  await t.req("PATCH", `/api/me/journal/${e.body.id}`, { token: a.token, body: { public: false } });
  assert.equal((await q("analytic")).journal.length, 0);
  await t.req("PATCH", `/api/me/journal/${e.body.id}`, { token: a.token, body: { public: true } });
  assert.equal((await q("analytic")).journal.length, 1);
  // Edited text: the old words stop matching.
  await t.req("PATCH", `/api/me/journal/${e.body.id}`, {
    token: a.token,
    body: { text: "Now about looms" },
  });
  assert.equal((await q("analytic")).journal.length, 0);
  assert.equal((await q("looms")).journal.length, 1);
  // Deleted: gone, and its index entries too.
  await t.req("DELETE", `/api/me/journal/${e.body.id}`, { token: a.token });
  assert.equal((await q("looms")).journal.length, 0);
  for await (const k of t.kv.list({ prefix: ["search", "journal"] })) assert.fail(`left: ${k.key}`);
  // The dictionary keeps no word that no entry holds any more.
  for await (const k of t.kv.list({ prefix: ["search_terms", "journal"] })) {
    assert.fail(`left: ${k.key}`);
  }
  // Renamed: the old name stops matching; the name cleared: not searchable at all.
  await t.req("PATCH", "/api/me", { token: a.token, body: { name: "Augusta King" } });
  assert.equal((await q("lovelace")).people.length, 0);
  assert.equal((await q("augusta")).people.length, 1);
  await t.req("PATCH", "/api/me", { token: a.token, body: { name: "" } });
  assert.equal((await q("augusta")).people.length, 0);
  for await (const k of t.kv.list({ prefix: ["search", "person"] })) assert.fail(`left: ${k.key}`);
  for await (const k of t.kv.list({ prefix: ["search_terms", "person"] })) {
    assert.fail(`left: ${k.key}`);
  }
});

Deno.test("search: a kept answer is never shown after a change, in this process or another", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using t = await testApp({ kvPath: `${dir}/kv.sqlite3` });
    // A second process on the same KV file: its own KV handle, so its own kept answers.
    const other = await openKv(`${dir}/kv.sqlite3`);
    try {
      const a = await t.account("a@example.org", { name: "Ada Lovelace" });
      const u = await t.account("u@example.org");
      const post = (token: string, text: string) =>
        t.req("POST", "/api/me/journal", { token, body: { text } });
      const first = await post(a.token, "Weaving with cards");
      await post(u.token, "Weaving unnamed");
      const q = async () => (await t.req("GET", "/api/search?q=weav")).body;
      const shown = async () =>
        (await q()).journal.map((j: { text: string; name: string }) => `${j.name}: ${j.text}`);
      assert.deepEqual(await shown(), ["Ada Lovelace: Weaving with cards"]);
      assert.deepEqual(await shown(), ["Ada Lovelace: Weaving with cards"]); // kept
      // A new entry is newest first.
      await post(a.token, "Weaving at night");
      assert.deepEqual(await shown(), [
        "Ada Lovelace: Weaving at night",
        "Ada Lovelace: Weaving with cards",
      ]);
      // An edit that keeps every word (the text shown changes all the same).
      await t.req("PATCH", `/api/me/journal/${first.body.id}`, {
        token: a.token,
        body: { text: "weaving WITH cards!" },
      });
      assert.deepEqual(await shown(), [
        "Ada Lovelace: Weaving at night",
        "Ada Lovelace: weaving WITH cards!",
      ]);
      // The author renamed: the name beside the entries changes.
      await t.req("PATCH", "/api/me", { token: a.token, body: { name: "Augusta King" } });
      assert.deepEqual(await shown(), [
        "Augusta King: Weaving at night",
        "Augusta King: weaving WITH cards!",
      ]);
      // An unnamed author given a name: their entry shows.
      await t.req("PATCH", "/api/me", { token: u.token, body: { name: "Una" } });
      assert.deepEqual(await shown(), [
        "Augusta King: Weaving at night",
        "Una: Weaving unnamed",
        "Augusta King: weaving WITH cards!",
      ]);
      // A field shown but not searched (the role).
      const role = async () => (await t.req("GET", "/api/search?q=augusta")).body.people[0].role;
      assert.equal(await role(), "");
      await t.req("PATCH", "/api/me", { token: a.token, body: { role: "researcher" } });
      assert.equal(await role(), "researcher");
      // The other process writes: an entry, an edit keeping the words, a rename.
      const now = t.clock.now();
      await addEntry(other, a.account.id, { text: "Weaving elsewhere", public: true }, now);
      await updateEntry(other, a.account.id, first.body.id, { text: "weaving with CARDS" }, now);
      await updateProfile(other, u.account.id, { name: "Una Weaver" }, now);
      assert.deepEqual(await shown(), [
        "Augusta King: Weaving elsewhere",
        "Augusta King: Weaving at night",
        "Una Weaver: Weaving unnamed",
        "Augusta King: weaving with CARDS",
      ]);
      // Made private in the other process: gone here at once.
      await updateEntry(other, a.account.id, first.body.id, { public: false }, now);
      assert.equal((await q()).journal.length, 3);
    } finally {
      other.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("search: private entries and entries of unnamed accounts never show", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ada" });
  const u = await t.account("u@example.org");
  await t.req("POST", "/api/me/journal", {
    token: a.token,
    body: { text: "hidden zebra", public: false },
  });
  await t.req("POST", "/api/me/journal", { token: u.token, body: { text: "nameless zebra" } });
  await t.req("POST", "/api/me/journal", { token: a.token, body: { text: "visible zebra" } });
  const r = await t.req("GET", "/api/search?q=zebra");
  assert.deepEqual(r.body.journal.map((j: { text: string }) => j.text), ["visible zebra"]);
  const people: Hit[] = r.body.people;
  assert.equal(people.length, 0);
});

Deno.test("search: q must be at least 2 characters; 1200 an hour per origin", async () => {
  await using t = await testApp();
  for (const q of ["", "a", "%20a%20"]) {
    const r = await t.req("GET", `/api/search?q=${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.field, "q");
  }
  assert.equal((await t.req("GET", "/api/search")).status, 400);
  assert.equal((await t.req("GET", `/api/search?q=${"x".repeat(201)}`)).status, 400);
  const none = await t.req("GET", "/api/search?q=%21%21");
  assert.deepEqual(none.body, { ok: true, people: [], journal: [], modules: [], suggestion: null });
  for (let i = 0; i < 1200; i++) {
    const r = await t.req("GET", "/api/search?q=ab", { from: "203.0.113.9" });
    if (r.status !== 200) assert.fail(`call ${i} answered ${r.status}`);
  }
  const over = await t.req("GET", "/api/search?q=ab", { from: "203.0.113.9" });
  assert.equal(over.status, 429);
  assert.ok(Number(over.headers.get("retry-after")) > 0);
  assert.equal((await t.req("GET", "/api/search?q=ab", { from: "203.0.113.10" })).status, 200);
  // Once the Retry-After it said has passed, one more goes through.
  t.clock.advance(Number(over.headers.get("retry-after")) * 1000);
  assert.equal((await t.req("GET", "/api/search?q=ab", { from: "203.0.113.9" })).status, 200);
});

Deno.test("search: a rare word narrows a word with more index entries than one scan reads", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("a@example.org", { name: "Ada" });
  // 2 100 public entries say "common"; the newest one also says "rare", so a scan of
  // "common" (ids in ascending order, capped) never reaches it.
  let op = atomic(t.kv);
  for (let id = 1; id <= 2100; id++) {
    const e = {
      id,
      account: account.id,
      text: `common ${id}`,
      public: true,
      created: 0,
      updated: null,
    };
    op.set(["journal", id], e).set(["journal_by_account", account.id, id], true)
      .set(["search", "journal", "common", id], true);
    if (id % 300 === 0) {
      await commit(op);
      op = atomic(t.kv);
    }
  }
  await commit(op);
  const first = await t.req("POST", "/api/me/journal", { token, body: { text: "common rare" } });
  assert.ok(first.body.id > 2100, "newer than every seeded entry");
  const both = await t.req("GET", "/api/search?q=common%20rare");
  assert.deepEqual(both.body.journal.map((j: { id: number }) => j.id), [first.body.id]);
  const rareFirst = await t.req("GET", "/api/search?q=rare%20comm");
  assert.equal(rareFirst.body.journal.length, 1);
  const common = await t.req("GET", "/api/search?q=common");
  assert.equal(common.body.journal.length, 20);
});

Deno.test("search and accounts routes are in the OpenAPI document; wrong methods answer 405", async () => {
  await using t = await testApp();
  const doc = await t.req("GET", "/api/openapi.json");
  assert.equal(doc.status, 200);
  for (
    const p of [
      "/me/journal",
      "/me/journal/{id}",
      "/search",
      "/profiles/{id}",
      "/profiles/slug/{name}",
      "/avatars/{id}",
      "/me/avatar",
      "/me/apply",
      "/applications",
      "/applications/{id}",
      "/me/invites",
      "/invites",
      "/actors",
      "/me/export",
    ]
  ) assert.ok(doc.body.paths[`/api${p}`], p);
  assert.ok(doc.body.paths["/api/me"].patch && doc.body.paths["/api/me"].delete);
  const wrong = await t.req("PUT", "/api/me/journal");
  assert.equal(wrong.status, 405);
  assert.equal((await t.req("POST", "/api/search?q=ab")).status, 405);
});

Deno.test("search: in a large index the newest matches come first", async () => {
  await using t = await testApp();
  const { account } = await t.account("a@example.org", { name: "Ada" });
  // Written straight to KV in the layout of kv/accounts/journal.ts (through indexChange), ids in
  // order of creation: every entry says "common", one in 500 "alpha", every one a tag
  // t0..t499 (so "t1" is a prefix of 111 terms), one in 7 is private. Enough entries that
  // every query that finds any finds more than one page of answers (the rarest, "alpha", too)
  // and "common" far more than one scan reads; the cost at 100 000 is `deno task bench`'s.
  const N = 15_000;
  const alpha = (id: number) => id % 500 === 7;
  const text = (id: number) => `common t${id % 500}${alpha(id) ? " alpha" : ""}`;
  const isPublic = (id: number) => id % 7 !== 3;
  let op = atomic(t.kv);
  let muts = 0;
  for (let id = 1; id <= N; id++) {
    const e = { id, account: account.id, text: text(id), public: isPublic(id), created: id };
    op.set(["journal", id], { ...e, updated: null });
    if (e.public) indexChange(op, "journal", id, null, e.text);
    if ((muts += 8) >= 900) {
      assert.ok((await commit(op)).ok);
      op = atomic(t.kv);
      muts = 0;
    }
  }
  assert.ok((await commit(op)).ok);
  const newest = (q: (id: number) => boolean) => {
    const out: number[] = [];
    for (let id = N; id > 0 && out.length < 20; id--) if (isPublic(id) && q(id)) out.push(id);
    return out;
  };
  const ids = async (q: string) =>
    (await t.req("GET", `/api/search?q=${encodeURIComponent(q)}`)).body.journal.map((
      j: { id: number },
    ) => j.id);
  assert.deepEqual(await ids("common"), newest(() => true));
  assert.deepEqual(await ids("comm"), newest(() => true));
  const publicAlphas = Array.from({ length: N }, (_, i) => i + 1).filter((id) =>
    alpha(id) && isPublic(id)
  );
  assert.ok(publicAlphas.length > 20, "alpha has more than one page");
  assert.deepEqual(await ids("alpha"), newest(alpha));
  assert.deepEqual(await ids("t1"), newest((id) => String(id % 500).startsWith("1")));
  assert.deepEqual(
    await ids("alpha t7"),
    newest((id) => alpha(id) && String(id % 500).startsWith("7")),
  );
  assert.deepEqual(await ids("t42 comm"), newest((id) => String(id % 500).startsWith("42")));
  assert.deepEqual(await ids("t499 alpha"), []);
});
