import assert from "node:assert/strict";
import { DAY, MINUTE } from "../lib/clock.ts";
import { sha256hex } from "../lib/crypto.ts";
import { dumpKv, T0, testApp } from "./_helpers.ts";

Deno.test("devices: list with the current marker, newest first", async () => {
  await using t = await testApp();
  const a = await t.signIn("d@b.org", { name: "Dev" });
  t.clock.advance(10 * MINUTE);
  const b = await t.signIn("d@b.org");
  const other = await t.signIn("other@b.org");
  const r = await t.req("GET", "/api/me/devices", { token: a.token });
  assert.equal(r.status, 200);
  assert.equal(r.body.items.length, 2);
  const [newer, older] = r.body.items;
  assert.deepEqual(Object.keys(newer).sort(), ["created", "current", "expires", "id", "last_used"]);
  assert.equal(newer.current, false);
  assert.equal(older.current, true);
  assert.equal(older.created, new Date(T0).toISOString());
  assert.equal(older.expires, new Date(T0 + 30 * DAY).toISOString());
  assert.equal(older.expires, a.expires);
  assert.equal(newer.expires, b.expires);
  assert.ok(newer.id > older.id);
  const fromB = await t.req("GET", "/api/me/devices", { token: b.token });
  assert.deepEqual(fromB.body.items.map((i: { current: boolean }) => i.current), [true, false]);
  // Another account's devices never show.
  const o = await t.req("GET", "/api/me/devices", { token: other.token });
  assert.equal(o.body.items.length, 1);
});

Deno.test("devices: a token ends at exactly 30 days, however much it is used", async () => {
  await using t = await testApp();
  const s = await t.signIn("d@b.org");
  for (let day = 0; day < 29; day++) {
    t.clock.advance(DAY);
    assert.equal((await t.req("GET", "/api/me", { token: s.token })).status, 200);
  }
  t.clock.advance(DAY - 1); // 30 days less 1 ms after sign-in
  const last = await t.req("GET", "/api/me/devices", { token: s.token });
  assert.equal(last.status, 200);
  assert.equal(last.body.items[0].expires, s.expires);
  t.clock.advance(1);
  const gone = await t.req("GET", "/api/me", { token: s.token });
  assert.equal(gone.status, 401);
  assert.equal(typeof gone.body.error, "string");
});

Deno.test("devices: last_used is written at most once a minute", async () => {
  await using t = await testApp();
  const s = await t.signIn("d@b.org");
  const key = ["sessions", sha256hex(s.token)];
  const v0 = (await t.kv.get(key)).versionstamp;
  t.clock.advance(59_999);
  for (let i = 0; i < 5; i++) await t.req("GET", "/api/me", { token: s.token });
  assert.equal((await t.kv.get(key)).versionstamp, v0, "no write within the minute");
  let list = await t.req("GET", "/api/me/devices", { token: s.token });
  assert.equal(list.body.items[0].last_used, new Date(T0).toISOString());
  t.clock.advance(1);
  await t.req("GET", "/api/me", { token: s.token });
  const v1 = (await t.kv.get(key)).versionstamp;
  assert.notEqual(v1, v0);
  list = await t.req("GET", "/api/me/devices", { token: s.token });
  assert.equal(list.body.items[0].last_used, new Date(T0 + MINUTE).toISOString());
  assert.equal((await t.kv.get(key)).versionstamp, v1);
  // Use does not move the expiry.
  assert.equal(list.body.items[0].expires, s.expires);
});

Deno.test("devices: DELETE one ends that session at once, others stay", async () => {
  await using t = await testApp();
  const a = await t.signIn("d@b.org");
  const b = await t.signIn("d@b.org");
  const list = await t.req("GET", "/api/me/devices", { token: a.token });
  const bId = list.body.items.find((i: { current: boolean }) => !i.current).id;
  const del = await t.req("DELETE", `/api/me/devices/${bId}`, { token: a.token });
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { ok: true, ended: 1 });
  assert.equal((await t.req("GET", "/api/me", { token: b.token })).status, 401);
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).status, 200);
  assert.equal((await t.req("DELETE", `/api/me/devices/${bId}`, { token: a.token })).status, 404);
  const after = await t.req("GET", "/api/me/devices", { token: a.token });
  assert.equal(after.body.items.length, 1);
  assert.doesNotMatch(await dumpKv(t.kv), new RegExp(sha256hex(b.token)));
});

Deno.test("devices: another account's session id answers 404 and stays alive", async () => {
  await using t = await testApp();
  const mine = await t.signIn("me@b.org");
  const theirs = await t.signIn("them@b.org");
  const theirId = (await t.req("GET", "/api/me/devices", { token: theirs.token })).body.items[0].id;
  const r = await t.req("DELETE", `/api/me/devices/${theirId}`, { token: mine.token });
  assert.equal(r.status, 404);
  assert.equal(typeof r.body.error, "string");
  assert.equal((await t.req("GET", "/api/me", { token: theirs.token })).status, 200);
  for (const bad of ["0", "abc", "-1", "1.5", "99999999999999999999"]) {
    assert.equal(
      (await t.req("DELETE", `/api/me/devices/${bad}`, { token: mine.token })).status,
      404,
    );
  }
});

Deno.test("devices: DELETE ?all=1 ends every session, the current one included", async () => {
  await using t = await testApp();
  const a = await t.signIn("d@b.org");
  const b = await t.signIn("d@b.org");
  const c = await t.signIn("d@b.org");
  const other = await t.signIn("o@b.org");
  const no = await t.req("DELETE", "/api/me/devices", { token: a.token });
  assert.equal(no.status, 400);
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).status, 200);
  const r = await t.req("DELETE", "/api/me/devices?all=1", { token: a.token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { ok: true, ended: 3 });
  for (const s of [a, b, c]) {
    assert.equal((await t.req("GET", "/api/me", { token: s.token })).status, 401);
  }
  assert.equal((await t.req("GET", "/api/me", { token: other.token })).status, 200);
  assert.equal((await dumpKv(t.kv)).match(/^\["sessions(_by_account)?",/gm)?.length, 2);
});

Deno.test("devices: DELETE /api/me/token signs this device out at once", async () => {
  await using t = await testApp();
  const a = await t.signIn("d@b.org");
  const b = await t.signIn("d@b.org");
  const r = await t.req("DELETE", "/api/me/token", { token: a.token });
  assert.equal(r.status, 200);
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).status, 401);
  assert.equal((await t.req("DELETE", "/api/me/token", { token: a.token })).status, 401);
  assert.equal((await t.req("GET", "/api/me", { token: b.token })).status, 200);
});

Deno.test("devices: every device route needs a token", async () => {
  await using t = await testApp();
  for (
    const [m, p] of [
      ["GET", "/api/me/devices"],
      ["DELETE", "/api/me/devices/1"],
      ["DELETE", "/api/me/devices?all=1"],
      ["DELETE", "/api/me/token"],
      ["GET", "/api/me"],
    ]
  ) {
    const r = await t.req(m, p);
    assert.equal(r.status, 401, `${m} ${p}`);
    assert.equal(typeof r.body.error, "string");
  }
});

Deno.test("devices: only a hash of the bearer token is stored", async () => {
  await using t = await testApp();
  const s = await t.signIn("d@b.org");
  assert.ok(s.token.length >= 22);
  const kv = await dumpKv(t.kv);
  assert.ok(!kv.includes(s.token));
  assert.ok(kv.includes(sha256hex(s.token)));
});
