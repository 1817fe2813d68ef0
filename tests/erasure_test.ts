import assert from "node:assert/strict";
import { type AccountPart, accountParts } from "../kv/parts/mod.ts";
import { verifyTrail } from "../kv/store/trail.ts";
import { MINUTE } from "../lib/clock.ts";
import { dumpKv, testApp } from "./_helpers.ts";
import * as ada from "./_account_fixture.ts";
import { ok } from "./_account_fixture.ts";

Deno.test("erasure: needs a fresh token, then nothing of the account is left in KV", async () => {
  await using t = await testApp();
  // Carl invites Ada; Ada accepts, so Carl's invitation holds her address.
  const carl = await t.account("carl@example.org", { name: "Carl" });
  const joined = await ada.acceptInvitation(t, carl.token, "Come along");
  const id = joined.id;
  let token = joined.token;
  await ada.fillProfile(t, token);
  await ada.writeJournal(t, token, "Splendiferous public note");
  await ada.approvedApplication(t, token, "Application about marmalade pedagogy");
  await ada.inviteDora(t, token, "Hello from Quuxley");
  // A pending link to the address, and an invitation Dora accepts.
  await t.req("GET", `/api/verify?token=${t.mail.linkToken("dora@example.org")}`);
  assert.equal((await t.req("GET", "/api/search?q=quuxley")).body.people.length, 1);

  // A token older than 15 minutes is not fresh.
  t.clock.advance(16 * MINUTE);
  const stale = await t.req("DELETE", "/api/me", { token });
  assert.equal(stale.status, 409);
  assert.equal(stale.body.fresh_required, true);
  assert.ok((await dumpKv(t.kv)).includes("adelaide@example.org"));

  // The caller signs in again and repeats with the new token.
  const fresh = await t.signIn("adelaide@example.org");
  token = fresh.token;
  const badBody = await t.req("DELETE", "/api/me", { token, body: { keep: ["x"] } });
  assert.equal(badBody.status, 400);
  assert.deepEqual(badBody.body, {
    error: "keep: item 1 must be a whole number of at least 1",
    field: "keep",
  });
  const both = await t.req("DELETE", "/api/me", { token, body: { keep: [1], remove: [1] } });
  assert.equal(both.status, 400);
  const r = await t.req("DELETE", "/api/me", { token });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ok: true, kept: 0, unpublished: 0, deleted: 0 });

  const dump = (await dumpKv(t.kv)).toLowerCase();
  for (
    const s of [
      "adelaide",
      ...ada.MADE_UP,
      "from quuxley",
      "avatar_chunks",
      `["accounts",${id}]`,
      `["journal_by_account",${id}`,
      `["trail_by_account",${id}`,
      `["sessions_by_account",${id}`,
      `["applications_by_account",${id}`,
      `["invites_by_inviter",${id}`,
      `["account_seen",${id}]`,
    ]
  ) assert.ok(!dump.includes(s), `KV still holds ${s}`);

  // The trail keeps its lines (ids only) and still verifies, with one erase line.
  const verdict = await verifyTrail(t.kv, true);
  assert.equal(verdict.ok, true);
  const erased: string[] = [];
  for await (const e of t.kv.list<{ action: string; subject: string }>({ prefix: ["trail"] })) {
    if (e.value.action === "account.erase") erased.push(e.value.subject);
  }
  assert.deepEqual(erased, [`account:${id}`]);
  // Every token of the account is dead; its public traces are gone.
  assert.equal((await t.req("GET", "/api/me", { token })).status, 401);
  assert.equal((await t.req("GET", `/api/profiles/${id}`)).status, 404);
  assert.equal((await t.req("GET", `/api/avatars/${id}`)).status, 404);
  assert.equal((await t.req("GET", "/api/search?q=splendiferous")).body.journal.length, 0);
  // Carl's invitation stays in his list, accepted, without the address.
  const carlList = await t.req("GET", "/api/me/invites", { token: carl.token });
  assert.equal(carlList.body.items[0].accepted, true);
  assert.equal(carlList.body.items[0].email, "");
  // The address may sign up again as a new account.
  const again = await t.signIn("adelaide@example.org");
  assert.notEqual(again.actor.id, id);
});

Deno.test("erasure: other accounts are untouched", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Erased" });
  const b = await t.account("b@example.org", { name: "Bob Kept" });
  await t.req("POST", "/api/me/journal", { token: b.token, body: { text: "bob stays here" } });
  await t.req("POST", "/api/me/journal", { token: a.token, body: { text: "ann goes" } });
  const r = await t.req("DELETE", "/api/me", { token: a.token });
  assert.equal(r.status, 200, r.text);
  const me = await t.req("GET", "/api/me", { token: b.token });
  assert.equal(me.body.name, "Bob Kept");
  assert.equal((await t.req("GET", "/api/search?q=bob")).body.people.length, 1);
  assert.equal((await t.req("GET", "/api/search?q=stays")).body.journal.length, 1);
  assert.equal((await t.req("GET", "/api/me/journal", { token: b.token })).body.items.length, 1);
  assert.equal((await t.req("DELETE", "/api/me")).status, 401);
});

Deno.test("erasure: the account's other devices are signed out before its data goes", async () => {
  await using t = await testApp();
  const a = await t.account("rae@example.org", { name: "Rae Race" });
  const other: string = (await t.signIn("rae@example.org")).token;
  // A part that runs after the accounts area has erased the journal: a write by another device
  // of the account at that moment would be left behind, orphaned, if its session still worked.
  const statuses: number[] = [];
  const probe: AccountPart = {
    name: "probe",
    sections: {},
    export: () => Promise.resolve({}),
    async erase() {
      const r = await t.req("POST", "/api/me/journal", {
        token: other,
        body: { text: "Slipped in during erasure" },
      });
      statuses.push(r.status);
      return {};
    },
  };
  accountParts.push(probe);
  try {
    const r = await t.req("DELETE", "/api/me", { token: a.token });
    assert.equal(r.status, 200, r.text);
  } finally {
    accountParts.splice(accountParts.indexOf(probe), 1);
  }
  assert.deepEqual(statuses, [401]);
  assert.ok(!(await dumpKv(t.kv)).includes("Slipped in"));
});

Deno.test("erasure across every area: services, files, points, modules, proposals, requests", async () => {
  await using t = await testApp({
    config: { teamInbox: "team@inbox.test", reportInbox: "reports@inbox.test" },
  });
  const owner = await t.account("own@example.org", { name: "Owner", roles: ["owner"] });
  const signedIn = await t.signIn("adelaide@example.org", { name: "Adelaide Quuxley" });
  const token: string = signedIn.token;
  const id: number = signedIn.actor.id;

  // Watched service with a heartbeat and its status text.
  await ada.heartbeatWith(t, token, "plonkton");
  // A stored file.
  await ada.storeNotes(t, token);
  // Two published proposals (attribution keep and remove), one still under review.
  const keptId = await ada.propose(t, token, "Marmalade pedagogy");
  await ada.publish(t, owner.token, keptId);
  await ada.publish(
    t,
    owner.token,
    await ada.propose(t, token, "Splendiferous widgets", { attribution: "remove" }),
  );
  await ada.propose(t, token, "Clandestine draft", {
    area: "other",
    summary: "Clandestine summary",
  });
  const catalogue = await t.req("GET", "/api/catalogue");
  const slugs: string[] = catalogue.body.modules.map((m: { slug: string }) => m.slug);
  assert.equal(slugs.length, 2);
  ok(await t.req("POST", `/api/modules/${slugs[0]}/point`, { token }));
  await ada.requestTool(t, "Clandestine request text");

  const r = await t.req("DELETE", "/api/me", { token });
  ok(r);
  assert.deepEqual(r.body, { ok: true, kept: 1, unpublished: 1, deleted: 1 });

  // The kept module still says who made it; nothing else holds the name, and nothing at all
  // holds the address or any text of the account.
  const lines = (await dumpKv(t.kv)).toLowerCase().split("\n");
  for (
    const s of ["adelaide@", "zorbulon", "frobnicat", "plonkton", "wibblewobble", "clandestine"]
  ) {
    const left = lines.filter((l) => l.includes(s));
    assert.deepEqual(left, [], `KV still holds ${s}`);
  }
  // Only the kept module, its published proposal (address blanked) and its search words do.
  const named = lines.filter((l) => l.includes("quuxley"));
  const kept = [
    '["modules","marmalade-pedagogy"]',
    `["proposals",${keptId}]`,
    '["search","module",',
  ];
  const allowed = (l: string) =>
    kept.some((k) => l.startsWith(k)) && (!l.startsWith('["search"') || l.includes("marmalade"));
  assert.ok(named.length > 0 && named.every(allowed), named.join("\n"));
  const after = await t.req("GET", "/api/catalogue");
  assert.deepEqual(after.body.modules.map((m: { title: string }) => m.title), [
    "Marmalade pedagogy",
  ]);
  assert.equal(after.body.modules[0].by, "Adelaide Quuxley");
  const points = await t.req("GET", "/api/points");
  assert.equal(points.body.counts[slugs[0]] ?? 0, 0);
  assert.equal((await verifyTrail(t.kv, true)).ok, true);
  assert.equal((await t.req("GET", `/api/profiles/${id}`)).status, 404);
});
