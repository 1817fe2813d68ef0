import assert from "node:assert/strict";
import { dropLinksTo, findLink, LINK_LIFE, prepareLink } from "../kv/accounts/links.ts";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import { sha256hex } from "../lib/crypto.ts";
import { dumpKv, T0, testApp } from "./_helpers.ts";
import { atomic, commit } from "../kv/_atomic.ts";

Deno.test("links: lifetimes of every purpose", () => {
  assert.equal(LINK_LIFE.login, 20 * MINUTE);
  assert.equal(LINK_LIFE.address, HOUR);
  assert.equal(LINK_LIFE.proposal, 7 * DAY);
  assert.equal(LINK_LIFE.invite, 7 * DAY);
});

Deno.test("links: a link is consumed once even when nothing else in the atomics conflicts", async () => {
  await using t = await testApp();
  const l = await prepareLink(t.kv, { purpose: "login", email: "a@b.org" }, T0);
  assert.ok((await commit(l.apply(atomic(t.kv)))).ok);
  const [a, b] = await Promise.all([findLink(t.kv, l.token, T0), findLink(t.kv, l.token, T0)]);
  const results = await Promise.all([
    commit(a!.consume(atomic(t.kv)).set(["x", 1], 1)),
    commit(b!.consume(atomic(t.kv)).set(["x", 2], 2)),
  ]);
  assert.deepEqual(results.map((r) => r.ok).sort(), [false, true]);
  assert.equal(await findLink(t.kv, l.token, T0), null);
});

Deno.test("links: only the hash of a link token is stored; expiry is in the value", async () => {
  await using t = await testApp();
  const l = await prepareLink(t.kv, { purpose: "address", email: "a@b.org" }, T0);
  await commit(l.apply(atomic(t.kv)));
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes(l.token));
  assert.ok(dump.includes(sha256hex(l.token)));
  assert.ok(await findLink(t.kv, l.token, T0 + HOUR - 1));
  assert.equal(await findLink(t.kv, l.token, T0 + HOUR), null);
  assert.equal(await findLink(t.kv, "short", T0), null);
});

Deno.test("links: erasure drops every live link to an address", async () => {
  await using t = await testApp();
  for (const purpose of ["login", "address", "proposal"] as const) {
    const l = await prepareLink(t.kv, { purpose, email: "a@b.org" }, T0);
    await commit(l.apply(atomic(t.kv)));
  }
  const other = await prepareLink(t.kv, { purpose: "login", email: "c@b.org" }, T0);
  await commit(other.apply(atomic(t.kv)));
  await dropLinksTo(t.kv, "a@b.org");
  const left = await dumpKv(t.kv);
  assert.equal(left.match(/^\["links",/gm)?.length, 1);
  assert.ok(await findLink(t.kv, other.token, T0));
});
