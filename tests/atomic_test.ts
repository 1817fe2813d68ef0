import assert from "node:assert/strict";
import {
  type Atomic,
  atomic,
  atomicStats,
  commit,
  ConflictError,
  isLocked,
  lockSafe,
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
    // A budget far past the product's: on a loaded machine 300 writers take longer in wall time,
    // and what is proved here is that no count of tries gives up, not how fast they finish.
    const bump = () =>
      transact(async () => {
        const e = await kv.get<number>(["n"]);
        // A read that takes a moment, as a real attempt's reads do: writers overlap.
        await new Promise((r) => setTimeout(r, 0));
        return { op: atomic(kv).check(e).set(["n"], (e.value ?? 0) + 1), result: 0 };
      }, 60_000);
    await Promise.all(Array.from({ length: 300 }, bump));
    assert.equal((await kv.get(["n"])).value, 300);
    assert.ok(atomicStats.retries > before, "the retries are counted");
  } finally {
    kv.close();
  }
});

Deno.test("atomic: a locked file is waited for by time, like a conflict, not by a count", async () => {
  let calls = 0;
  // 20 locked answers in a row (more than the 12 tries once allowed), then the lock is free.
  const v = await retryLocked(() => ++calls <= 20 ? Promise.reject(locked()) : Promise.resolve(1));
  assert.equal(v, 1);
  assert.equal(calls, 21);
  // Past its budget it gives the lock error up to the caller (answered 503).
  await assert.rejects(retryLocked(() => Promise.reject(locked()), 30), /database is locked/);
});

Deno.test("atomic: a list that meets a lock goes on from the last entry it gave", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (let i = 0; i < 25; i++) await kv.set(["n", i], i);
    let lists = 0;
    // Every list's second batch meets the lock, as a list crossing another process's commit can.
    const flaky = new Proxy(kv, {
      get(t, prop) {
        const value = Reflect.get(t, prop, t);
        if (prop !== "list") return typeof value === "function" ? value.bind(t) : value;
        return (sel: Deno.KvListSelector, opts: Deno.KvListOptions) => {
          lists++;
          const inner = t.list(sel, { ...opts, batchSize: 4 });
          let n = 0;
          return {
            next: () => ++n === 5 ? Promise.reject(locked()) : inner.next(),
            get cursor() {
              return inner.cursor;
            },
            [Symbol.asyncIterator]() {
              return this;
            },
          };
        };
      },
    });
    const safe = lockSafe(flaky);
    const got: number[] = [];
    for await (const e of safe.list<number>({ prefix: ["n"] })) got.push(e.value);
    assert.deepEqual(got, Array.from({ length: 25 }, (_, i) => i));
    assert.ok(lists >= 6, `listed again from the cursor (${lists} lists)`);
    const some: number[] = [];
    for await (const e of safe.list<number>({ prefix: ["n"] }, { limit: 10, reverse: true })) {
      some.push(e.value);
    }
    assert.deepEqual(some, [24, 23, 22, 21, 20, 19, 18, 17, 16, 15]);
  } finally {
    kv.close();
  }
});
