import assert from "node:assert/strict";
import { HOUR, MINUTE } from "../lib/clock.ts";
import { testApp } from "./_helpers.ts";

Deno.test("sign-in: link request, verify, account created, token works", async () => {
  await using t = await testApp();
  const r = await t.req("POST", "/api/verify/request", {
    body: { email: " Ada@Example.ORG ", purpose: "login", age_ok: true, name: "Ada Lovelace" },
  });
  assert.equal(r.status, 202);
  assert.deepEqual(r.body, { ok: true, sent: true });
  const mail = t.mail.last("ada@example.org")!;
  assert.match(mail.text, /^http:\/\/test\.local\/me\?verify=[A-Za-z0-9_-]{43}$/m);
  const token = t.mail.linkToken("ada@example.org");
  const v = await t.req("GET", `/api/verify?token=${token}`);
  assert.equal(v.status, 200, v.text);
  assert.equal(v.body.ok, true);
  assert.equal(v.body.confirmed, 0);
  assert.equal(v.body.actor.email, "ada@example.org");
  assert.equal(v.body.actor.name, "Ada Lovelace");
  assert.equal(v.body.actor.standing, "collector");
  assert.deepEqual(v.body.actor.roles, []);
  assert.equal(v.body.expires, new Date(t.clock.now() + 30 * 24 * HOUR).toISOString());
  const me = await t.req("GET", "/api/me", { token: v.body.token });
  assert.equal(me.status, 200);
  assert.equal(me.body.id, v.body.actor.id);
  assert.equal(me.body.kind, "email");
  assert.equal(me.body.slug, "ada-lovelace");
  assert.equal(me.body.avatar, null);
  // The link works once.
  const again = await t.req("GET", `/api/verify?token=${token}`);
  assert.equal(again.status, 410);
  assert.ok(again.body.error);
});

Deno.test("sign-in: login link expires after 20 minutes", async () => {
  await using t = await testApp();
  await t.req("POST", "/api/verify/request", { body: { email: "a@b.org", age_ok: true } });
  t.clock.advance(20 * MINUTE);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(v.status, 410);
  await t.req("POST", "/api/verify/request", { body: { email: "a@b.org", age_ok: true } });
  t.clock.advance(20 * MINUTE - 1);
  const ok = await t.req("GET", `/api/verify?token=${t.mail.linkToken("a@b.org")}`);
  assert.equal(ok.status, 200);
});
