import assert from "node:assert/strict";
import { transact } from "../kv/_atomic.ts";
import { GENESIS, lineHash, trailAppend, type TrailLine, trailLinesOf } from "../kv/trail.ts";
import { dumpKv, T0, type TestApp, testApp } from "./_helpers.ts";

async function append(t: TestApp, n: number, change?: (op: Deno.AtomicOperation) => void) {
  for (let i = 0; i < n; i++) {
    await transact(async () => {
      const tr = await trailAppend(
        t.kv,
        [{ actor: "system", action: "test.step", fields: ["x"] }],
        t.clock.now(),
      );
      const op = tr.apply(t.kv.atomic());
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
  const res = await tr.apply(t.kv.atomic()).check(stale).set(["thing", 2], "lost").commit();
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
