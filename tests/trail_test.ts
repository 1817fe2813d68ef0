import assert from "node:assert/strict";
import { type Atomic, atomic, commit, transact } from "../kv/_atomic.ts";
import { atomicStats } from "../kv/_atomic.ts";
import {
  chainTrail,
  GENESIS,
  lineHash,
  trailAppend,
  type TrailLine,
  trailLinesOf,
  verifyTrail,
} from "../kv/store/trail.ts";
import { MINUTELY, runJobs } from "../jobs/mod.ts";
import { dumpKv, T0, type TestApp, testApp } from "./_helpers.ts";

async function append(t: TestApp, n: number, change?: (op: Atomic) => void) {
  for (let i = 0; i < n; i++) {
    await transact(async () => {
      const tr = await trailAppend(
        t.kv,
        [{ actor: "system", action: "test.step", fields: ["x"] }],
        t.clock.now(),
      );
      const op = tr.apply(atomic(t.kv));
      change?.(op);
      return { op, result: null };
    });
  }
}

async function line(t: TestApp, seq: number): Promise<TrailLine> {
  return (await t.kv.get<TrailLine>(["trail", seq])).value!;
}

Deno.test("trail: lines chain by SHA-256 from a genesis of zeros", async () => {
  await using t = await testApp();
  await append(t, 3);
  const [l1, l2, l3] = [await line(t, 1), await line(t, 2), await line(t, 3)];
  assert.equal(l1.prev, GENESIS);
  assert.equal(l2.prev, l1.hash);
  assert.equal(l3.prev, l2.hash);
  assert.equal(l1.at, new Date(T0).toISOString());
  assert.equal(l2.hash, await lineHash(l1.hash, l2));
  assert.match(l3.hash, /^[0-9a-f]{64}$/);
  const v = await t.req("GET", "/api/audit/verify");
  assert.equal(v.status, 200);
  assert.deepEqual(v.body, {
    ok: true,
    lines: 3,
    head: l3.hash,
    checked: 3,
    from: 1,
    broken: null,
    waiting: 0,
  });
});

Deno.test("trail: an empty trail verifies", async () => {
  await using t = await testApp();
  const v = await t.req("GET", "/api/audit/verify");
  assert.deepEqual(v.body, {
    ok: true,
    lines: 0,
    head: GENESIS,
    checked: 0,
    from: 1,
    broken: null,
    waiting: 0,
  });
});

Deno.test("trail: a line is written in the same atomic as its change, or not at all", async () => {
  await using t = await testApp();
  await append(t, 1, (op) => op.set(["thing", 1], "changed"));
  assert.equal((await t.kv.get(["thing", 1])).value, "changed");
  // A change whose check fails takes its trail line down with it.
  await t.kv.set(["guard"], 1);
  const stale = await t.kv.get(["guard"]);
  await t.kv.set(["guard"], 2);
  const tr = await trailAppend(t.kv, [{ actor: "system", action: "test.lost" }], t.clock.now());
  const res = await commit(tr.apply(atomic(t.kv)).check(stale).set(["thing", 2], "lost"));
  assert.equal(res.ok, false);
  assert.equal((await t.kv.get(["trail", 2])).value, null);
  assert.equal((await t.kv.get(["thing", 2])).value, null);
  assert.equal((await t.req("GET", "/api/audit/verify")).body.lines, 1);
});

Deno.test("trail: concurrent appends never share a seq and keep the chain", async () => {
  await using t = await testApp();
  await Promise.all(Array.from({ length: 12 }, () => append(t, 1)));
  const v = await t.req("GET", "/api/audit/verify");
  assert.equal(v.body.ok, true);
  assert.equal(v.body.lines, 12);
});

Deno.test("trail: first sign-in writes its line with the account, ids only", async () => {
  await using t = await testApp();
  const s = await t.signIn("secret.person@example.org", { name: "Secret Person" });
  const l = await line(t, 1);
  assert.equal(l.action, "account.create");
  assert.equal(l.actor, `account:${s.actor.id}`);
  assert.equal(l.subject, `account:${s.actor.id}`);
  const text = JSON.stringify(l);
  assert.ok(!text.includes("secret"));
  assert.ok(!text.toLowerCase().includes("person"));
  assert.deepEqual((await trailLinesOf(t.kv, s.actor.id)).map((x) => x.seq), [1]);
  // A later sign-in to the same account adds no line.
  await t.signIn("secret.person@example.org");
  assert.equal((await t.req("GET", "/api/audit/verify")).body.lines, 1);
});

Deno.test("trail: a tampered line is detected with its seq", async () => {
  await using t = await testApp();
  await append(t, 5);
  const l3 = await line(t, 3);
  await t.kv.set(["trail", 3], { ...l3, actor: "account:999" });
  const v = await t.req("GET", "/api/audit/verify");
  assert.equal(v.status, 200);
  assert.equal(v.body.ok, false);
  assert.equal(v.body.broken.seq, 3);
  assert.equal(typeof v.body.broken.reason, "string");
  assert.equal(v.body.lines, 5);
});

Deno.test("trail: a rewritten line with a recomputed hash breaks the next link", async () => {
  await using t = await testApp();
  await append(t, 4);
  const l2 = await line(t, 2);
  const forged = { ...l2, fields: ["y"] };
  forged.hash = await lineHash(forged.prev, forged);
  await t.kv.set(["trail", 2], forged);
  const v = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(v.ok, false);
  assert.equal(v.broken.seq, 3);
});

Deno.test("trail: a deleted line and a forged last line are detected", async () => {
  await using t = await testApp();
  await append(t, 4);
  const l2 = await line(t, 2);
  await t.kv.delete(["trail", 2]);
  let v = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(v.ok, false);
  assert.equal(v.broken.seq, 2);
  await t.kv.set(["trail", 2], l2);
  assert.equal((await t.req("GET", "/api/audit/verify")).body.ok, true);
  // Rewriting the last line consistently still disagrees with the head.
  const l4 = await line(t, 4);
  const forged = { ...l4, action: "test.other" };
  forged.hash = await lineHash(forged.prev, forged);
  await t.kv.set(["trail", 4], forged);
  v = (await t.req("GET", "/api/audit/verify?full=1")).body;
  assert.equal(v.ok, false);
  assert.equal(v.broken.seq, 4);
});

Deno.test("trail: checkpoints: a second verify reads only new lines; full=1 re-reads all", async () => {
  await using t = await testApp();
  await append(t, 6);
  const first = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(first.checked, 6);
  const cp = (await t.kv.get(["trail_checkpoint"])).versionstamp;
  const again = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal((await t.kv.get(["trail_checkpoint"])).versionstamp, cp, "no write: nothing new");
  assert.deepEqual({ ...again, head: "" }, {
    ok: true,
    lines: 6,
    head: "",
    checked: 0,
    from: 7,
    broken: null,
    waiting: 0,
  });
  await append(t, 2);
  const next = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(next.ok, true);
  assert.equal(next.lines, 8);
  assert.equal(next.from, 7);
  assert.equal(next.checked, 2);
  assert.equal(next.head, (await line(t, 8)).hash);
  // Tampering before the checkpoint: the incremental walk does not re-read it...
  const l2 = await line(t, 2);
  await t.kv.set(["trail", 2], { ...l2, action: "test.tampered" });
  const quick = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(quick.ok, true);
  assert.equal(quick.checked, 0);
  // ...the full walk does, and from then on every verification reports it.
  const full = (await t.req("GET", "/api/audit/verify?full=1")).body;
  assert.equal(full.ok, false);
  assert.equal(full.from, 1);
  assert.equal(full.broken.seq, 2);
  const after = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(after.ok, false);
  assert.equal(after.broken.seq, 2);
  // Repaired, it verifies again.
  await t.kv.set(["trail", 2], l2);
  assert.equal((await t.req("GET", "/api/audit/verify")).body.ok, true);
});

Deno.test("trail: bad ?full answers 400; the verdict leaks no content", async () => {
  await using t = await testApp();
  assert.equal((await t.req("GET", "/api/audit/verify?full=yes")).status, 400);
  await t.signIn("x@example.org", { name: "Xena" });
  const dump = (await t.req("GET", "/api/audit/verify?full=1")).text;
  assert.ok(!dump.includes("example.org"));
  assert.doesNotMatch(await dumpKv(t.kv), /\["trail",1\].*example\.org/);
});

Deno.test("trail: unrelated changes never conflict on the trail; lines wait in a queue", async () => {
  await using t = await testApp();
  // Committed by Deno itself, not kv/_atomic.ts commit (which runs the sequencer): lines stay
  // queued until a sequencer runs.
  const raw = await Deno.openKv(":memory:");
  try {
    const one = await trailAppend(raw, [{ actor: "system", action: "test.a" }], t.clock.now());
    const two = await trailAppend(raw, [
      { actor: "system", action: "test.b" },
      { actor: "account:7", action: "test.c", subject: "account:7" },
    ], t.clock.now());
    // Both prepared before either commits: with a shared head the second would fail.
    assert.ok((await one.apply(raw.atomic()).set(["x", 1], 1).commit()).ok);
    assert.ok((await two.apply(raw.atomic()).set(["x", 2], 2).commit()).ok);
    const before = await verifyTrail(raw);
    assert.equal(before.lines, 0);
    assert.equal(before.waiting, 3);
    // Two sequencers at once: each line is chained once, in commit order.
    const [a, b] = await Promise.all([chainTrail(raw), chainTrail(raw)]);
    assert.equal(a + b, 3);
    const after = await verifyTrail(raw, true);
    assert.deepEqual({ ok: after.ok, lines: after.lines, waiting: after.waiting }, {
      ok: true,
      lines: 3,
      waiting: 0,
    });
    const actions = (await Array.fromAsync(raw.list<TrailLine>({ prefix: ["trail"] })))
      .map((e) => e.value.action);
    assert.deepEqual(actions, ["test.a", "test.b", "test.c"]);
    assert.deepEqual(
      (await trailLinesOf(raw, 7)).map((l) => l.action),
      ["test.c"],
    );
  } finally {
    raw.close();
  }
});

Deno.test("trail: a line left queued (a crash before chaining) is chained by the minutely job", async () => {
  await using t = await testApp();
  // Written behind the commit hook's back, as if the process died right after the commit.
  await t.kv.set(["trail_queue", 1, 0], {
    actor: "system",
    action: "test.left",
    at: new Date(t.clock.now()).toISOString(),
  });
  assert.equal((await t.req("GET", "/api/audit/verify")).body.waiting, 1);
  await runJobs(t.deps, MINUTELY);
  const v = (await t.req("GET", "/api/audit/verify")).body;
  assert.equal(v.waiting, 0);
  assert.equal(v.lines, 1);
  assert.equal(v.ok, true);
});

Deno.test("trail: 50 changes by 50 accounts at once all land at the first try, then chain", async () => {
  await using t = await testApp();
  const accounts = await Promise.all(
    Array.from({ length: 50 }, (_, i) => t.account(`p${i}@example.org`, { name: `P ${i}` })),
  );
  const before = atomicStats.retries;
  const answers = await Promise.all(
    accounts.map((a, i) =>
      t.req("PATCH", "/api/me", { token: a.token, body: { org: `Society ${i}` } })
    ),
  );
  assert.ok(answers.every((r) => r.status === 200), answers.map((r) => r.status).join());
  assert.equal(atomicStats.retries, before, "no change conflicted with another");
  const v = (await t.req("GET", "/api/audit/verify?full=1")).body;
  assert.equal(v.ok, true);
  assert.equal(v.waiting, 0);
  assert.ok(v.lines >= 50);
});
