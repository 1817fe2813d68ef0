import assert from "node:assert/strict";
import { addEntry } from "../kv/accounts/journal.ts";
import { claimId, drawnId, ID_EPOCH, nextId } from "../kv/store/ids.ts";
import { aroundCommits, testApp } from "./_helpers.ts";
import { atomic, commit } from "../kv/_atomic.ts";

Deno.test("ids: time-based, strictly increasing in a process, above the floor, 15 digits", () => {
  const now = Date.UTC(2026, 10, 23);
  let last = 0;
  for (let i = 0; i < 5000; i++) {
    const id = nextId("journal", 0, now); // one millisecond for all: the process keeps order
    assert.ok(id > last);
    last = id;
  }
  assert.ok(last >= (now - ID_EPOCH) * 1024);
  // A floor from KV (a process whose clock is behind) keeps ids above every one given.
  assert.equal(nextId("journal", last + 1_000_000, now), last + 1_000_001);
  // 15 digits (the id pattern of paths) until 2055. Drawn, not taken: a taken id would raise
  // this process's order of its kind to 2100 for every test after this one.
  assert.ok(drawnId(Date.UTC(2055, 0, 1), 1023) < 1e15);
  assert.ok(Number.isSafeInteger(drawnId(Date.UTC(2100, 0, 1), 1023)));
});

Deno.test("ids: an id already in use fails the commit, so it is never given twice", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const claim = await claimId(kv, "journal", (id) => ["journal", id]);
    await kv.set(["journal", claim.id], "someone else's");
    const res = await commit(claim.apply(atomic(kv)).set(["journal", claim.id], "mine"));
    assert.equal(res.ok, false);
    const again = await claimId(kv, "journal", (id) => ["journal", id]);
    assert.ok(again.id > claim.id);
    assert.ok((await commit(again.apply(atomic(kv)))).ok);
    assert.equal((await kv.get<Deno.KvU64>(["ids", "journal"])).value?.value, BigInt(again.id));
  } finally {
    kv.close();
  }
});

Deno.test("ids: creating records of two accounts at once never conflicts", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann" });
  const b = await t.account("b@example.org", { name: "Bob" });
  const raw = t.deps.kv;
  const results: boolean[] = [];
  // Right before each of Ann's entries commits, Bob writes one: the worst interleaving for a
  // shared counter. Ann's commits must all pass at the first try.
  const racing = aroundCommits(raw, async (commit, sets) => {
    const mine = sets.some((key) => key[0] === "journal_by_account" && key[1] === a.account.id);
    if (mine) await addEntry(raw, b.account.id, { text: "bob", public: true }, 0);
    const res = await commit();
    if (mine) results.push(res.ok);
    return res;
  });
  Object.assign(t.deps, { kv: racing });
  for (let i = 0; i < 5; i++) {
    const r = await t.req("POST", "/api/me/journal", {
      token: a.token,
      body: { text: `ann ${i}` },
    });
    assert.equal(r.status, 201);
  }
  Object.assign(t.deps, { kv: raw });
  assert.deepEqual(results, [true, true, true, true, true]);
  const ids = (await t.req("GET", "/api/me/journal", { token: b.token })).body.items.map((
    e: { id: number },
  ) => e.id);
  assert.equal(new Set(ids).size, 5);
});
