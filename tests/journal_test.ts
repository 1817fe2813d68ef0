import assert from "node:assert/strict";
import { dumpKv, testApp } from "./_helpers.ts";

Deno.test("journal: create, list newest first, patch stamps updated, delete", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const a = await t.req("POST", "/api/me/journal", { token, body: { text: " first " } });
  assert.equal(a.status, 201, a.text);
  // `{ok, item}` as every other write answers, with the entry's fields also at the top level.
  assert.deepEqual(Object.keys(a.body).sort(), [
    "created",
    "id",
    "item",
    "ok",
    "public",
    "text",
    "updated",
  ]);
  assert.equal(a.body.ok, true);
  assert.deepEqual(Object.keys(a.body.item).sort(), ["created", "id", "public", "text", "updated"]);
  for (const [k, v] of Object.entries(a.body.item)) assert.equal(a.body[k], v, k);
  assert.equal(a.body.text, "first");
  assert.equal(a.body.public, true);
  assert.equal(a.body.updated, null);
  assert.equal(a.body.created, new Date(t.clock.now()).toISOString());
  t.clock.advance(1000);
  const b = await t.req("POST", "/api/me/journal", {
    token,
    body: { text: "second", public: false },
  });
  assert.equal(b.body.public, false);
  const list = await t.req("GET", "/api/me/journal", { token });
  assert.deepEqual(list.body.items.map((i: { text: string }) => i.text), ["second", "first"]);
  t.clock.advance(1000);
  const p = await t.req("PATCH", `/api/me/journal/${a.body.id}`, {
    token,
    body: { text: "first, edited" },
  });
  assert.equal(p.status, 200);
  assert.equal(p.body.text, "first, edited");
  assert.equal(p.body.public, true);
  assert.equal(p.body.updated, new Date(t.clock.now()).toISOString());
  assert.equal(p.body.ok, true);
  assert.equal(p.body.item.text, "first, edited");
  assert.equal(p.body.item.updated, p.body.updated);
  const p2 = await t.req("PATCH", `/api/me/journal/${b.body.id}`, {
    token,
    body: { public: true },
  });
  assert.equal(p2.body.public, true);
  assert.equal(p2.body.text, "second");
  const d = await t.req("DELETE", `/api/me/journal/${a.body.id}`, { token });
  assert.equal(d.status, 200);
  const after = await t.req("GET", "/api/me/journal", { token });
  assert.deepEqual(after.body.items.map((i: { id: number }) => i.id), [b.body.id]);
  assert.equal((await t.req("DELETE", `/api/me/journal/${a.body.id}`, { token })).status, 404);
});

Deno.test("journal: validation 400s name the field and store nothing", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  const ok = await t.req("POST", "/api/me/journal", { token, body: { text: "kept" } });
  const before = await dumpKv(t.kv);
  const bad: [unknown, string][] = [
    [{ text: "" }, "text"],
    [{ text: "   " }, "text"],
    [{ text: "x".repeat(2001) }, "text"],
    [{}, "text"],
    [{ text: "ok", public: "yes" }, "public"],
    [{ text: "bell\u0007" }, "text"],
    [{ text: "\u{1F331}".repeat(2001) }, "text"],
  ];
  for (const [body, field] of bad) {
    const r = await t.req("POST", "/api/me/journal", { token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.field, field);
  }
  const r = await t.req("PATCH", `/api/me/journal/${ok.body.id}`, { token, body: { text: "" } });
  assert.equal(r.status, 400);
  assert.equal(r.body.field, "text");
  assert.equal(await dumpKv(t.kv), before);
  assert.equal((await t.req("POST", "/api/me/journal", { body: { text: "x" } })).status, 401);
  const x2000 = await t.req("POST", "/api/me/journal", { token, body: { text: "x".repeat(2000) } });
  assert.equal(x2000.status, 201);
  // Characters, not UTF-16 units: 2000 emoji (4000 units) are 2000 characters.
  const emoji = await t.req("POST", "/api/me/journal", {
    token,
    body: { text: "\u{1F331}".repeat(2000) },
  });
  assert.equal(emoji.status, 201, emoji.text);
  assert.equal([...emoji.body.text].length, 2000);
});

Deno.test("journal: another account's entry answers 404", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann" });
  const b = await t.account("b@example.org", { name: "Bob" });
  const e = await t.req("POST", "/api/me/journal", { token: a.token, body: { text: "mine" } });
  const p = await t.req("PATCH", `/api/me/journal/${e.body.id}`, {
    token: b.token,
    body: { text: "hijack" },
  });
  assert.equal(p.status, 404);
  assert.equal(
    (await t.req("DELETE", `/api/me/journal/${e.body.id}`, { token: b.token })).status,
    404,
  );
  assert.equal(
    (await t.req("PATCH", "/api/me/journal/abc", { token: b.token, body: {} })).status,
    404,
  );
  const list = await t.req("GET", "/api/me/journal", { token: a.token });
  assert.equal(list.body.items[0].text, "mine");
});

Deno.test("journal: 60 entries an hour, then 429 with Retry-After; after it, one more works", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  for (let i = 0; i < 60; i++) {
    const r = await t.req("POST", "/api/me/journal", { token, body: { text: `entry ${i}` } });
    assert.equal(r.status, 201);
  }
  const over = await t.req("POST", "/api/me/journal", { token, body: { text: "one more" } });
  assert.equal(over.status, 429);
  assert.ok(Number(over.headers.get("retry-after")) > 0);
  assert.equal((await t.req("GET", "/api/me/journal", { token })).body.items.length, 60);
  // Once the Retry-After it said has passed, one more goes through.
  t.clock.advance(Number(over.headers.get("retry-after")) * 1000);
  assert.equal(
    (await t.req("POST", "/api/me/journal", { token, body: { text: "later" } })).status,
    201,
  );
});
