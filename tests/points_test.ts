import assert from "node:assert/strict";
import { foldOldVersion, pointsVersionKey, versionShard } from "../kv/catalogue/points.ts";
import { seedModule } from "./_catalogue.ts";
import { dumpKv, testApp } from "./_helpers.ts";
import { atomic, commit } from "../kv/_atomic.ts";

Deno.test("points: toggle gives then withdraws; counts and mine", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Able", roles: ["contributor"] });
  const b = await t.account("b@example.org");
  await seedModule(t, "pond-life", [a.account.id]);
  await seedModule(t, "solder-club", [a.account.id]);
  await seedModule(t, "draft", [a.account.id], { published: false });

  assert.equal((await t.req("POST", "/api/modules/pond-life/point")).status, 401);
  assert.equal((await t.req("POST", "/api/modules/nope/point", { token: b.token })).status, 404);
  assert.equal((await t.req("POST", "/api/modules/draft/point", { token: b.token })).status, 404);

  const give = await t.req("POST", "/api/modules/pond-life/point", { token: b.token });
  assert.equal(give.status, 200);
  assert.deepEqual(give.body, { ok: true, points: 1, mine: true });
  const give2 = await t.req("POST", "/api/modules/pond-life/point", { token: a.token });
  assert.deepEqual(give2.body, { ok: true, points: 2, mine: true });

  const pub = await t.req("GET", "/api/points");
  assert.deepEqual(pub.body, { counts: { "pond-life": 2, "solder-club": 0 }, mine: [] });
  const mine = await t.req("GET", "/api/points", { token: b.token });
  assert.deepEqual(mine.body.mine, ["pond-life"]);
  const meta = await t.req("GET", "/api/modules/meta");
  assert.deepEqual(meta.body, {
    items: {
      "pond-life": { contributors: [{ id: a.account.id, name: "Ann Able" }], points: 2 },
      "solder-club": { contributors: [{ id: a.account.id, name: "Ann Able" }], points: 0 },
    },
  });
  const item = await t.req("GET", "/api/me/modules/pond-life", { token: a.token });
  assert.equal(item.body.item.points, 2);

  const back = await t.req("POST", "/api/modules/pond-life/point", { token: b.token });
  assert.deepEqual(back.body, { ok: true, points: 1, mine: false });
  assert.deepEqual((await t.req("GET", "/api/points", { token: b.token })).body.mine, []);
  assert.equal((await t.req("GET", "/api/points")).body.counts["pond-life"], 1);
  const kv = await dumpKv(t.kv);
  assert.ok(!kv.includes(`["points","pond-life",${b.account.id}]`));
  assert.ok(!kv.includes(`["points_by_account",${b.account.id},`));
});

Deno.test("points: 120 changes an hour per account, then 429 with Retry-After", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Able", roles: ["contributor"] });
  const b = await t.account("b@example.org");
  await seedModule(t, "pond-life", [a.account.id]);
  for (let i = 0; i < 120; i++) {
    const r = await t.req("POST", "/api/modules/pond-life/point", { token: b.token });
    assert.equal(r.status, 200, `toggle ${i + 1}`);
    assert.equal(r.body.mine, i % 2 === 0);
  }
  const over = await t.req("POST", "/api/modules/pond-life/point", { token: b.token });
  assert.equal(over.status, 429);
  assert.ok(Number(over.headers.get("retry-after")) > 0);
  assert.ok(over.body.error);
  // Refused: the point did not move; other accounts are not limited.
  assert.equal((await t.req("GET", "/api/points")).body.counts["pond-life"], 0);
  const other = await t.req("POST", "/api/modules/pond-life/point", { token: a.token });
  assert.equal(other.status, 200);
  // Once the Retry-After it said has passed, one more goes through.
  t.clock.advance(Number(over.headers.get("retry-after")) * 1000);
  const later = await t.req("POST", "/api/modules/pond-life/point", { token: b.token });
  assert.deepEqual(later.body, { ok: true, points: 2, mine: true });
});

Deno.test("points: many accounts toggling at once keep the count exact", async () => {
  await using t = await testApp();
  const owner = await t.account("o@example.org", { name: "Owen Owner", roles: ["contributor"] });
  await seedModule(t, "pond-life", [owner.account.id]);
  const accounts = [];
  for (let i = 0; i < 60; i++) accounts.push(await t.account(`u${i}@example.org`));
  // Account i toggles (i % 4) + 1 times, all at once: odd numbers of toggles end holding a point.
  const calls = accounts.flatMap((a, i) => Array.from({ length: (i % 4) + 1 }, () => a.token));
  const results = await Promise.all(
    calls.map((token) => t.req("POST", "/api/modules/pond-life/point", { token })),
  );
  assert.ok(
    results.every((r) => r.status === 200),
    results.find((r) => r.status !== 200)?.text ?? "",
  );
  const holders = accounts.filter((_, i) => ((i % 4) + 1) % 2 === 1).length;
  assert.equal(holders, 30);
  const counts = (await t.req("GET", "/api/points")).body.counts;
  assert.equal(counts["pond-life"], holders);
  let keys = 0;
  for await (const _ of t.kv.list({ prefix: ["points", "pond-life"] })) keys++;
  assert.equal(keys, holders);
  for (const [i, a] of accounts.entries()) {
    const mine = (await t.req("GET", "/api/points", { token: a.token })).body.mine;
    assert.deepEqual(mine, ((i % 4) + 1) % 2 === 1 ? ["pond-life"] : []);
  }
});

Deno.test("points: two toggles by one account at once never leave the count off", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Able", roles: ["contributor"] });
  await seedModule(t, "pond-life", [a.account.id]);
  for (const n of [2, 3, 5]) {
    const before = (await t.req("GET", "/api/points", { token: a.token })).body;
    const held = before.mine.length === 1;
    const rs = await Promise.all(
      Array.from(
        { length: n },
        () => t.req("POST", "/api/modules/pond-life/point", { token: a.token }),
      ),
    );
    assert.ok(rs.every((r) => r.status === 200));
    // Every answer is a distinct step of the sequence.
    assert.deepEqual(
      rs.map((r) => r.body.mine).filter(Boolean).length,
      held ? Math.floor(n / 2) : Math.ceil(n / 2),
    );
    const after = (await t.req("GET", "/api/points", { token: a.token })).body;
    const holdsNow = held !== (n % 2 === 1);
    assert.deepEqual(after.mine, holdsNow ? ["pond-life"] : []);
    assert.equal(after.counts["pond-life"], holdsNow ? 1 : 0);
  }
});

Deno.test("points: the hourly limit holds under concurrent toggles by one account", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Able", roles: ["contributor"] });
  await seedModule(t, "pond-life", [a.account.id]);
  const rs = await Promise.all(
    Array.from(
      { length: 130 },
      () => t.req("POST", "/api/modules/pond-life/point", { token: a.token }),
    ),
  );
  assert.equal(rs.filter((r) => r.status === 200).length, 120);
  assert.equal(rs.filter((r) => r.status === 429).length, 10);
  // 120 toggles: an even number, so no point is held.
  assert.deepEqual((await t.req("GET", "/api/points", { token: a.token })).body, {
    counts: { "pond-life": 0 },
    mine: [],
  });
});

Deno.test("points: an unpublished module's points are hidden, and come back with it", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Able", roles: ["contributor"] });
  await seedModule(t, "pond-life", [a.account.id]);
  await t.req("POST", "/api/modules/pond-life/point", { token: a.token });
  await seedModule(t, "pond-life", [a.account.id], { published: false });
  assert.deepEqual((await t.req("GET", "/api/points", { token: a.token })).body, {
    counts: {},
    mine: [],
  });
  assert.deepEqual((await t.req("GET", "/api/modules/meta")).body, { items: {} });
  assert.equal(
    (await t.req("POST", "/api/modules/pond-life/point", { token: a.token })).status,
    404,
  );
  await seedModule(t, "pond-life", [a.account.id]);
  assert.deepEqual((await t.req("GET", "/api/points", { token: a.token })).body, {
    counts: { "pond-life": 1 },
    mine: ["pond-life"],
  });
});

Deno.test("points: toggles on different modules move different version keys; counts follow", async () => {
  await using t = await testApp();
  const a = await t.account("a@example.org", { name: "Ann Able", roles: ["contributor"] });
  const b = await t.account("b@example.org");
  // Two modules in different shards: no key is written by every toggle.
  const slugs = ["pond-life", "solder-club", "tide-pools", "bird-song"];
  const first = slugs[0];
  const other = slugs.find((s) => versionShard(s) !== versionShard(first))!;
  for (const s of [first, other]) await seedModule(t, s, [a.account.id]);
  const version = async (s: string) =>
    (await t.kv.get<Deno.KvU64>(pointsVersionKey(versionShard(s)))).value?.value ?? 0n;

  assert.deepEqual((await t.req("GET", "/api/points")).body.counts, { [first]: 0, [other]: 0 });
  await t.req("POST", `/api/modules/${first}/point`, { token: b.token });
  assert.equal(await version(first), 1n);
  assert.equal(await version(other), 0n);
  await t.req("POST", `/api/modules/${other}/point`, { token: b.token });
  await t.req("POST", `/api/modules/${other}/point`, { token: a.token });
  assert.equal(await version(first), 1n);
  assert.equal(await version(other), 2n);
  // The cached counts are read again whenever any shard moved.
  assert.deepEqual((await t.req("GET", "/api/points")).body.counts, { [first]: 1, [other]: 2 });
  await t.req("POST", `/api/modules/${other}/point`, { token: a.token });
  assert.deepEqual((await t.req("GET", "/api/points")).body.counts, { [first]: 1, [other]: 1 });
  assert.equal(
    (await t.kv.get(["points_version"])).versionstamp,
    null,
    "the old key is not written",
  );

  // A store of before the shards: migration 11 folds its single version into shard 0, so the
  // sum readers compare still moves on (a count written behind the cache is read again).
  await commit(atomic(t.kv).sum(["point_counts", first], 1n).sum(["points_version"], 5n));
  const shard0 = (await t.kv.get<Deno.KvU64>(pointsVersionKey(0))).value?.value ?? 0n;
  await foldOldVersion(t.kv);
  assert.equal((await t.kv.get(["points_version"])).versionstamp, null, "the old key is gone");
  assert.equal((await t.kv.get<Deno.KvU64>(pointsVersionKey(0))).value?.value, shard0 + 5n);
  await foldOldVersion(t.kv);
  assert.equal((await t.kv.get<Deno.KvU64>(pointsVersionKey(0))).value?.value, shard0 + 5n);
  assert.deepEqual((await t.req("GET", "/api/points")).body.counts, { [first]: 2, [other]: 1 });
});
