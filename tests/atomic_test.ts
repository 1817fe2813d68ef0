import assert from "node:assert/strict";
import {
  type Atomic,
  atomic,
  atomicStats,
  commit,
  ConflictError,
  isLocked,
  retryLocked,
  transact,
} from "../kv/_atomic.ts";
import { aroundCommits } from "./_helpers.ts";

const locked = () => new Error("database is locked");

Deno.test("atomic: retryLocked retries a locked file, not other errors", async () => {
  let calls = 0;
  const v = await retryLocked(() => {
    if (++calls < 3) return Promise.reject(locked());
    return Promise.resolve("done");
  });
  assert.equal(v, "done");
  assert.equal(calls, 3);
  calls = 0;
  await assert.rejects(
    retryLocked(() => {
      calls++;
      return Promise.reject(new Error("disk full"));
    }),
    /disk full/,
  );
  assert.equal(calls, 1);
  assert.ok(isLocked(new Error("SQLITE_BUSY: x")));
  assert.ok(!isLocked("database is locked"));
});

Deno.test("atomic: commit retries a locked commit and runs nothing for a raw atomic", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    let fails = 0;
    // A KV whose commits answer "locked" every other time, as a file shared with the owner
    // command can.
    const flaky = aroundCommits(
      kv,
      (commit) => fails++ % 2 === 0 ? Promise.reject(locked()) : commit(),
    );
    const res = await commit(atomic(flaky).check({ key: ["b"], versionstamp: null }).set(["b"], 2));
    assert.ok(res.ok);
    assert.equal((await kv.get(["b"])).value, 2);
    assert.ok((await commit(atomic(flaky).sum(["n"], 1n))).ok);
    assert.equal(fails, 4); // each commit failed once, then went through
    // Only atomics of atomic() commit here: the commit path must see every write.
    await assert.rejects(commit(kv.atomic() as unknown as Atomic), /not an atomic/);
  } finally {
    kv.close();
  }
});

Deno.test("atomic: transact re-runs on a failed check and never loses an update", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const bump = () =>
      transact(async () => {
        const e = await kv.get<number>(["n"]);
        const n = (e.value ?? 0) + 1;
        return { op: atomic(kv).check(e).set(["n"], n), result: n };
      });
    const got = await Promise.all(Array.from({ length: 25 }, bump));
    assert.equal((await kv.get(["n"])).value, 25);
    assert.deepEqual(got.sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i + 1));
    // op null: nothing to write, the result comes back at once.
    assert.equal(await transact(() => Promise.resolve({ op: null, result: "same" })), "same");
    // A check that can never pass ends in ConflictError (answered 503 by the app).
    await kv.set(["x"], 1);
    const stale = await kv.get(["x"]);
    await kv.set(["x"], 2);
    await assert.rejects(
      transact(() => Promise.resolve({ op: atomic(kv).check(stale), result: 1 }), 50),
      ConflictError,
    );
  } finally {
    kv.close();
  }
});

Deno.test("atomic: 300 writers on one key all land (retries by time, not a small count)", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const before = atomicStats.retries;
    const bump = () =>
      transact(async () => {
        const e = await kv.get<number>(["n"]);
        // A read that takes a moment, as a real attempt's reads do: writers overlap.
        await new Promise((r) => setTimeout(r, 0));
        return { op: atomic(kv).check(e).set(["n"], (e.value ?? 0) + 1), result: 0 };
      });
    await Promise.all(Array.from({ length: 300 }, bump));
    assert.equal((await kv.get(["n"])).value, 300);
    assert.ok(atomicStats.retries > before, "the retries are counted");
  } finally {
    kv.close();
  }
});
