import assert from "node:assert/strict";
import { countSubjectUse, RULES, sweepRateWindows } from "../kv/store/rate_limit.ts";
import { HOUR, MINUTE } from "../lib/clock.ts";
import { ApiError } from "../http/errors.ts";
import { limit } from "../http/guards.ts";
import { dumpKv, T0, testApp } from "./_helpers.ts";

const rule = { name: "test", max: 3, windowMs: HOUR };

Deno.test("rate limit: max uses per window, refused uses not counted, Retry-After to the window end", async () => {
  await using t = await testApp();
  const now = T0 + 20 * MINUTE;
  for (let i = 1; i <= 3; i++) {
    const v = await countSubjectUse(t.kv, rule, "s", now);
    assert.deepEqual(v, { ok: true, count: i, retryAfter: 40 * 60 });
  }
  for (let i = 0; i < 3; i++) {
    const v = await countSubjectUse(t.kv, rule, "s", now + 1500);
    assert.equal(v.ok, false);
    assert.equal(v.count, 3);
    // Spent: the first use comes back when it leaves the hour that ends then (3598.5 s).
    assert.equal(v.retryAfter, 60 * 60 - 1);
  }
  // Another subject has its own count.
  assert.equal((await countSubjectUse(t.kv, rule, "other", now)).ok, true);
  // The counting window ends at the full hour, but the uses are judged over the hour that
  // ends now: at the edge the three uses of :20 still count in full.
  const last = await countSubjectUse(t.kv, rule, "s", T0 + HOUR - 1);
  assert.equal(last.ok, false);
  assert.equal(last.retryAfter, 20 * 60 + 1);
  const edge = await countSubjectUse(t.kv, rule, "s", T0 + HOUR);
  assert.deepEqual(edge, { ok: false, count: 3, retryAfter: 20 * 60 });
  // One use comes back each third of an hour (3 an hour): at :20 past the next hour, one.
  assert.deepEqual(await countSubjectUse(t.kv, rule, "s", T0 + HOUR + 20 * MINUTE), {
    ok: true,
    count: 3,
    retryAfter: 40 * 60,
  });
  assert.equal((await countSubjectUse(t.kv, rule, "s", T0 + HOUR + 20 * MINUTE)).ok, false);
});

Deno.test("rate limit: at a window's edge, a limit spent at its end stays spent (no twice the limit)", async () => {
  await using t = await testApp();
  const edge = T0 + HOUR;
  // Three uses in the last second of a window...
  for (let i = 0; i < 3; i++) {
    assert.equal((await countSubjectUse(t.kv, rule, "s", edge - 1000)).ok, true);
  }
  // ... leave none a second after the edge, where fixed windows let three more through.
  const after = await countSubjectUse(t.kv, rule, "s", edge + 1000);
  assert.equal(after.ok, false);
  assert.equal(after.retryAfter, 20 * 60 - 1);
  let passed = 0;
  for (let s = 1; s < 3600; s += 60) {
    if ((await countSubjectUse(t.kv, rule, "s", edge + s * 1000)).ok) passed++;
  }
  // Over the hour after the edge, the limit refills as a bucket: one use each 20 minutes.
  assert.equal(passed, 2);
});

Deno.test("rate limit: concurrent hits never pass the limit", async () => {
  await using t = await testApp();
  const verdicts = await Promise.all(
    Array.from({ length: 20 }, () => countSubjectUse(t.kv, rule, "s", T0)),
  );
  assert.equal(verdicts.filter((v) => v.ok).length, 3);
  assert.deepEqual(verdicts.filter((v) => v.ok).map((v) => v.count).sort(), [1, 2, 3]);
});

Deno.test("rate limit: subjects are hashed, the window end is in the key, the sweep drops past windows", async () => {
  await using t = await testApp();
  await countSubjectUse(t.kv, rule, "ada@example.org", T0);
  await countSubjectUse(t.kv, rule, "203.0.113.9", T0 + HOUR);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes("ada@example.org"));
  assert.ok(!dump.includes("203.0.113.9"));
  assert.match(
    dump,
    new RegExp(`^\\["rate",${T0 + HOUR},"test","[0-9a-f]{32}"\\] \\{"value":"1"\\}$`, "m"),
  );
  // A counter is kept a window past its end (the next window's uses are judged by it).
  assert.equal(await sweepRateWindows(t.kv, T0 + HOUR), 0);
  assert.equal(await sweepRateWindows(t.kv, T0 + 2 * HOUR), 0);
  assert.equal(await sweepRateWindows(t.kv, T0 + 2 * HOUR + 1), 1);
  const left = await dumpKv(t.kv);
  assert.doesNotMatch(left, new RegExp(`"rate",${T0 + HOUR},`));
  assert.match(left, new RegExp(`"rate",${T0 + 2 * HOUR},`));
});

Deno.test("rate limit: every limit of docs/api.md's Limits is a rule, hourly", () => {
  const want: Record<string, number> = {
    linkByAddress: 5,
    linkByOrigin: 5,
    journal: 60,
    points: 120,
    search: 1200,
    manualCheck: 60,
    heartbeat: 600,
    upload: 60,
    proposalByAddress: 5,
    proposalByOrigin: 5,
  };
  for (const [k, max] of Object.entries(want)) {
    const r = RULES[k as keyof typeof RULES];
    assert.equal(r.max, max, k);
    assert.equal(r.windowMs, HOUR, k);
  }
  const names = Object.values(RULES).map((r) => r.name);
  assert.equal(new Set(names).size, names.length, "rule names are distinct keys");
});

Deno.test("rate limit: limit() throws 429 with Retry-After and retry_after", async () => {
  await using t = await testApp();
  t.clock.advance(59 * MINUTE);
  for (let i = 0; i < 5; i++) await limit(t.deps, RULES.linkByOrigin, "192.0.2.1");
  // The same subject under another rule is counted apart.
  await limit(t.deps, RULES.linkByAddress, "192.0.2.1");
  const err = await limit(t.deps, RULES.linkByOrigin, "192.0.2.1").then(() => null, (e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 429);
  // Five an hour, spent at :59: the next comes back a fifth of an hour after the edge.
  assert.equal(err.headers["Retry-After"], String(13 * 60));
  assert.equal(err.extra.retry_after, 13 * 60);
  t.clock.advance(MINUTE);
  const edge = await limit(t.deps, RULES.linkByOrigin, "192.0.2.1").then(() => null, (e) => e);
  assert.equal(edge?.status, 429, "the edge of the clock hour lets nothing more through");
  t.clock.advance(12 * MINUTE);
  await limit(t.deps, RULES.linkByOrigin, "192.0.2.1");
});

Deno.test("rate limit: the minutely sweep job clears ended windows", async () => {
  await using t = await testApp();
  const { MINUTELY, runJobs } = await import("../jobs/mod.ts");
  for (let i = 0; i < 3; i++) await limit(t.deps, RULES.search, `o${i}`);
  assert.equal((await dumpKv(t.kv)).match(/^\["rate",/gm)?.length, 3);
  await runJobs(t.deps, MINUTELY);
  assert.equal((await dumpKv(t.kv)).match(/^\["rate",/gm)?.length, 3);
  t.clock.advance(HOUR + MINUTE); // the window ended: it is still judged (the previous one)
  await runJobs(t.deps, MINUTELY);
  assert.equal((await dumpKv(t.kv)).match(/^\["rate",/gm)?.length, 3);
  t.clock.advance(HOUR); // a window after its end: read by nothing
  await runJobs(t.deps, MINUTELY);
  assert.equal((await dumpKv(t.kv)).match(/^\["rate",/gm), null);
});

Deno.test("per-origin limits count an IPv6 client by its /64", async () => {
  await using t = await testApp();
  for (let i = 1; i <= 5; i++) {
    const r = await t.req("POST", "/api/verify/request", {
      body: { email: `v6-${i}@example.org`, age_ok: true },
      from: `2001:db8:1:2::${i.toString(16)}`,
    });
    assert.equal(r.status, 202);
  }
  const sixth = await t.req("POST", "/api/verify/request", {
    body: { email: "v6-6@example.org", age_ok: true },
    from: "2001:db8:1:2:ffff::9",
  });
  assert.equal(sixth.status, 429);
  const other = await t.req("POST", "/api/verify/request", {
    body: { email: "v6-7@example.org", age_ok: true },
    from: "2001:db8:1:3::1",
  });
  assert.equal(other.status, 202);
});

Deno.test("rate limits: a sweep with nothing to delete writes nothing", async () => {
  // An empty commit appends to the KV file's write-ahead log all the same.
  const dir = await Deno.makeTempDir();
  try {
    await using t = await testApp({ kvPath: `${dir}/kv.sqlite3` });
    const wal = () => Deno.statSync(`${dir}/kv.sqlite3-wal`).size;
    const before = wal();
    assert.equal(await sweepRateWindows(t.kv, T0), 0);
    assert.equal(wal(), before);
    await countSubjectUse(t.kv, RULES.linkByOrigin, "192.0.2.1", T0);
    assert.ok(wal() > before, "a real write grows the log (the test can fail)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
