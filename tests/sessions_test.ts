import assert from "node:assert/strict";
import { testApp } from "./_helpers.ts";

Deno.test("sessions: a token names its account and only the whole token opens it", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org");
  const b = await t.account("b@example.org");
  assert.match(a.token, new RegExp(`^${a.account.id}_[A-Za-z0-9_-]{43}$`));
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).body.id, a.account.id);
  // The same secret under another account's id, or cut short, opens nothing.
  const swapped = a.token.replace(/^\d+_/, `${b.account.id}_`);
  for (const bad of [swapped, a.token.slice(0, -1), a.token.split("_").slice(1).join("_")]) {
    const r = await t.req("GET", "/api/me", { token: bad });
    assert.equal(r.status, 401, bad);
  }
  assert.equal((await t.req("GET", "/api/me", { token: b.token })).body.id, b.account.id);
});

Deno.test("sessions: a token whose account is gone opens nothing", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org");
  await t.kv.delete(["accounts", a.account.id]);
  assert.equal((await t.req("GET", "/api/me", { token: a.token })).status, 401);
});
