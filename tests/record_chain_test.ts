import assert from "node:assert/strict";
import { atomic, commit, openKv } from "../kv/_atomic.ts";
import { GENESIS, trailAppend, type TrailLine } from "../kv/store/trail.ts";
import { type ChainRecord, verifyRecordChain } from "../lib/record_chain.ts";

/** Lines made by the service's own trail code, so both follow one rule. */
async function lines(n: number, skip = 0): Promise<TrailLine[]> {
  const kv = await openKv(":memory:");
  try {
    const entries = Array.from({ length: n + skip }, (_, i) => ({
      actor: `account:${i + 1}`,
      action: i % 2 ? "module.edit" : "journal.create",
      subject: i % 3 ? `module:m${i}` : undefined,
      fields: i % 2 ? ["title", "lede"] : undefined,
    }));
    const app = await trailAppend(kv, entries, Date.parse("2026-01-02T03:04:05.678Z"));
    // The commit chains the queued lines before it returns.
    await commit(app.apply(atomic(kv)));
    const chained = await Array.fromAsync(kv.list<TrailLine>({ prefix: ["trail"] }));
    return chained.map((e) => e.value).slice(skip);
  } finally {
    kv.close();
  }
}

const plain = (l: TrailLine): ChainRecord => ({
  seq: l.seq,
  at: l.at,
  actor: l.actor,
  action: l.action,
  subject: l.subject,
  fields: l.fields,
});

Deno.test("record chain: the service's own trail lines verify as they are", async () => {
  const ls = await lines(5);
  assert.deepEqual(await verifyRecordChain(ls, undefined), {
    ok: true,
    detail: "5 records verified",
  });
  // Content only, with the head hash or with every hash.
  assert.equal((await verifyRecordChain(ls.map(plain), ls[4].hash)).ok, true);
  assert.equal((await verifyRecordChain(ls.map(plain), ls.map((l) => l.hash))).ok, true);
  // A slice from the middle of a trail verifies from its first line's prev.
  const mid = await lines(3, 4);
  assert.notEqual(mid[0].prev, GENESIS);
  assert.equal((await verifyRecordChain(mid, undefined)).ok, true);
});

Deno.test("record chain: nothing sent passes; anything tampered fails with the reason", async () => {
  assert.equal((await verifyRecordChain(undefined, undefined)).ok, true);
  assert.equal((await verifyRecordChain([], [])).ok, true);
  assert.equal((await verifyRecordChain([], "a".repeat(64))).ok, false);
  const ls = await lines(4);
  const edited = ls.map((l, i) => i === 2 ? { ...l, action: "module.delete" } : l);
  assert.deepEqual(await verifyRecordChain(edited, undefined), {
    ok: false,
    detail: "record 3: content does not match its hash",
  });
  const dropped = [ls[0], ls[1], ls[3]];
  assert.match((await verifyRecordChain(dropped, undefined)).detail, /record 3: seq 4/);
  const head = await verifyRecordChain(ls.map(plain), "f".repeat(64));
  assert.equal(head.detail, "chain head does not match the last record");
  const hashes = ls.map((l) => l.hash);
  hashes[1] = "e".repeat(64);
  assert.match((await verifyRecordChain(ls.map(plain), hashes)).detail, /record 2: chain hash/);
  assert.match((await verifyRecordChain(ls.map(plain), hashes.slice(1))).detail, /3 hashes for 4/);
  assert.match((await verifyRecordChain(ls.map(plain), undefined)).detail, /no hash to verify/);
  const relinked = ls.map((l, i) => i === 1 ? { ...l, prev: "1".repeat(64) } : l);
  assert.match((await verifyRecordChain(relinked, undefined)).detail, /record 2: prev/);
  const noStart = ls.slice(1).map(plain);
  assert.match((await verifyRecordChain(noStart, ls[3].hash)).detail, /start at seq 1/);
});
