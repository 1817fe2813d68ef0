import assert from "node:assert/strict";
import { DAY, HOUR } from "../lib/clock.ts";
import { dumpKv, testApp } from "./_helpers.ts";

Deno.test("invites: mailed link creates the account, marks the invitation accepted", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@example.org", { name: "Ada" });
  const r = await t.req("POST", "/api/me/invites", {
    token,
    body: { email: "Bob@Example.org", message: "Join us!" },
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.item.email, "bob@example.org");
  assert.equal(r.body.item.accepted, false);
  assert.equal(r.body.item.account, null);
  assert.equal(r.body.item.expires, new Date(t.clock.now() + 7 * DAY).toISOString());
  const mail = t.mail.last("bob@example.org")!;
  assert.match(mail.text, /Ada invites you/);
  assert.match(mail.text, /Join us!/);
  assert.match(mail.text, /^http:\/\/test\.local\/me\?verify=/m);
  t.clock.advance(7 * DAY - HOUR);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("bob@example.org")}`);
  assert.equal(v.status, 200, v.text);
  assert.equal(v.body.actor.email, "bob@example.org");
  const list = await t.req("GET", "/api/me/invites", { token });
  assert.equal(list.body.items.length, 1);
  assert.equal(list.body.items[0].accepted, true);
  assert.equal(list.body.items[0].account, v.body.actor.id);
  const svc = { "x-service-token": t.deps.config.serviceToken! };
  const all = await t.req("GET", "/api/invites", { headers: svc });
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.items[0].inviter, { id: account.id, name: "Ada" });
  assert.equal(all.body.items[0].outcome, "accepted");
});

Deno.test("invites: the link lasts seven days", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  await t.req("POST", "/api/me/invites", { token, body: { email: "bob@example.org" } });
  t.clock.advance(7 * DAY);
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken("bob@example.org")}`);
  assert.equal(v.status, 410);
  const rev = await t.account("rev@example.org", { name: "Rev", roles: ["reviewer"] });
  const all = await t.req("GET", "/api/invites", { token: rev.token });
  assert.equal(all.body.items[0].outcome, "expired");
  assert.equal((await t.req("GET", "/api/invites", { token })).status, 403);
  assert.equal((await t.req("GET", "/api/invites")).status, 401);
});

Deno.test("invites: name required; own address and existing accounts refused; fields checked", async () => {
  await using t = await testApp();
  const unnamed = await t.account("u@example.org");
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  await t.account("bob@example.org");
  const before = await dumpKv(t.kv);
  const sent = t.mail.sent.length;
  const noName = await t.req("POST", "/api/me/invites", {
    token: unnamed.token,
    body: { email: "x@example.org" },
  });
  assert.equal(noName.status, 400);
  assert.equal(noName.body.field, "name");
  const own = await t.req("POST", "/api/me/invites", { token, body: { email: "ADA@example.org" } });
  assert.equal(own.status, 400);
  assert.equal(own.body.field, "email");
  const taken = await t.req("POST", "/api/me/invites", {
    token,
    body: { email: "bob@example.org" },
  });
  assert.equal(taken.status, 409);
  const badEmail = await t.req("POST", "/api/me/invites", { token, body: { email: "nope" } });
  assert.equal(badEmail.status, 400);
  assert.equal(badEmail.body.field, "email");
  const long = await t.req("POST", "/api/me/invites", {
    token,
    body: { email: "c@example.org", message: "x".repeat(501) },
  });
  assert.equal(long.status, 400);
  assert.equal(long.body.field, "message");
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(t.mail.sent.length, sent);
  assert.equal(
    (await t.req("POST", "/api/me/invites", { body: { email: "c@example.org" } })).status,
    401,
  );
});

Deno.test("invites: 20 an hour per account, then 429", async () => {
  await using t = await testApp();
  const { token } = await t.account("ada@example.org", { name: "Ada" });
  for (let i = 0; i < 20; i++) {
    const r = await t.req("POST", "/api/me/invites", {
      token,
      body: { email: `p${i}@example.org` },
    });
    assert.equal(r.status, 201);
  }
  const over = await t.req("POST", "/api/me/invites", { token, body: { email: "q@example.org" } });
  assert.equal(over.status, 429);
  assert.ok(over.headers.get("retry-after"));
  assert.equal((await t.req("GET", "/api/me/invites", { token })).body.items.length, 20);
});
