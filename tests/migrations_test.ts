import assert from "node:assert/strict";
import { countMigrations, MIGRATIONS, runMigrations } from "../kv/store/migrations.ts";
import { codeHash } from "../kv/service/heartbeats.ts";
import { type Service, serviceByUuid } from "../kv/service/commands.ts";
import { dumpKv, testApp } from "./_helpers.ts";
import type { Context } from "hono";
import { healthz } from "../api/healthz.ts";
import type { Deps } from "../lib/deps.ts";
import { sleep } from "../lib/timers.ts";

Deno.test("migrations: ordered steps recorded once; running again changes nothing", async () => {
  await using t = await testApp(); // the helper ran them once already
  assert.ok(MIGRATIONS.length >= 1);
  const before = await dumpKv(t.kv);
  assert.equal(await runMigrations(t.kv, t.clock.now() + 1000), MIGRATIONS.length);
  assert.equal(await runMigrations(t.kv, t.clock.now() + 2000), MIGRATIONS.length);
  assert.equal(await dumpKv(t.kv), before);
  assert.equal(await countMigrations(t.kv), MIGRATIONS.length);
  for (let i = 1; i <= MIGRATIONS.length; i++) {
    const e = await t.kv.get<{ name: string }>(["migrations", i]);
    assert.equal(e.value?.name, MIGRATIONS[i - 1].name);
  }
});

Deno.test("migrations: two processes starting together apply each step once", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await Promise.all([runMigrations(kv, 1), runMigrations(kv, 2), runMigrations(kv, 3)]);
    assert.equal(await countMigrations(kv), MIGRATIONS.length);
  } finally {
    kv.close();
  }
});

Deno.test("migrations: healthz reports the count", async () => {
  await using t = await testApp();
  const r = await t.req("GET", "/api/healthz");
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { ok: true, db: "ok", migrations: MIGRATIONS.length });
  assert.equal(r.headers.get("cache-control"), "no-store");
  assert.match(r.headers.get("content-type") ?? "", /application\/json/);
});

Deno.test("migrations: healthz answers 503 {db: fail} when the KV does not answer", async () => {
  await using t = await testApp();
  t.kv.close();
  const r = await t.req("GET", "/api/healthz");
  assert.equal(r.status, 503);
  assert.equal(r.body.db, "fail");
  assert.equal(r.body.ok, false);
  assert.equal(typeof r.body.error, "string");
});

Deno.test("migrations: healthz answers 503 {db: fail} when the KV hangs past its time limit", async () => {
  // A KV whose reads never answer (a stuck disk, a partitioned KV Connect), not one that fails.
  const hung = {
    list: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) }),
  };
  const check = healthz({ kv: hung } as unknown as Deps, 50);
  const started = performance.now();
  const r = await check({} as Context);
  assert.ok(performance.now() - started < 1000, "answered within the limit and one check");
  assert.equal(r.status, 503);
  assert.deepEqual(await r.json(), {
    ok: false,
    db: "fail",
    error: "the database does not answer",
  });
  await sleep(300);
});

Deno.test("migration 2: accounts from before it name their latest application", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const bob = await t.account("bob@example.org", { name: "Bob" });
  const applied = await t.req("POST", "/api/me/apply", {
    token: ada.token,
    body: { text: "Twenty characters or more, surely." },
  });
  assert.equal(applied.status, 202, applied.text);
  const appId = applied.body.application.id;
  // Applying names the application on the account record in the same atomic.
  assert.equal(
    (await t.kv.get<{ application: number }>(["accounts", ada.account.id])).value!
      .application,
    appId,
  );
  // Records as they were before migration 2: no `application` field, no migration record.
  for (const id of [ada.account.id, bob.account.id]) {
    const e = await t.kv.get<Record<string, unknown>>(["accounts", id]);
    const { application: _, ...old } = e.value!;
    await t.kv.set(e.key, old);
  }
  await t.kv.delete(["migrations", 2]);
  assert.equal(await runMigrations(t.kv, t.clock.now()), MIGRATIONS.length);
  const after = await t.kv.getMany<{ application: number | null }[]>([
    ["accounts", ada.account.id],
    ["accounts", bob.account.id],
  ]);
  assert.deepEqual(after.map((e) => e.value!.application), [appId, null]);
  const me = await t.req("GET", "/api/me", { token: ada.token });
  assert.equal(me.body.application.id, appId);
  assert.equal((await t.req("GET", "/api/me", { token: bob.token })).body.application, null);
});

Deno.test("migrations: step 3 fills the search dictionary and drops words beyond the 300th", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada Lovelace" });
  // Words w0..w349: the earlier cap of 400 indexed all 350 of them.
  const long = Array.from({ length: 350 }, (_, i) => `w${i}`).join(" ");
  const post = await t.req("POST", "/api/me/journal", {
    token: ada.token,
    body: { text: `engines ${long}` },
  });
  assert.equal(post.status, 201);
  const id = post.body.id;
  for (let i = 299; i < 350; i++) await t.kv.set(["search", "journal", `w${i}`, id], true);
  // The layout before step 3: no dictionary.
  for await (const e of t.kv.list({ prefix: ["search_terms"] })) await t.kv.delete(e.key);
  assert.equal((await t.req("GET", "/api/search?q=engines")).body.journal.length, 0);
  assert.equal((await t.req("GET", "/api/search?q=lovelace")).body.people.length, 0);
  await t.kv.delete(["migrations", 3]);
  assert.equal(await runMigrations(t.kv, t.clock.now()), MIGRATIONS.length);
  assert.deepEqual(
    (await t.req("GET", "/api/search?q=engines")).body.journal.map((j: { id: number }) => j.id),
    [id],
  );
  assert.equal((await t.req("GET", "/api/search?q=lovelace")).body.people.length, 1);
  assert.equal((await t.req("GET", "/api/search?q=w298")).body.journal.length, 1);
  const left: string[] = [];
  for await (const e of t.kv.list({ prefix: ["search", "journal"] })) left.push(String(e.key[2]));
  assert.equal(left.length, 300, "the first 300 words stay indexed");
  assert.ok(!left.includes("w299") && !left.includes("w349"));
});

Deno.test("migrations 4 to 6: heartbeats from before get a UUID, a slug and one UUID index", async () => {
  await using t = await testApp();
  const { token, account } = await t.account("ops@example.org", { name: "Ops" });
  const made = async (name: string) =>
    (await t.req("POST", "/api/me/services", {
      token,
      body: { name, check: "webhook:", interval: 60 },
    })).body.item;
  const [before, halfway] = [await made("Nightly Backup"), await made("Log rotate")];
  const key = (id: number) => ["services", account.id, id];
  const codeKey = (uuid: string) => ["hooks", codeHash(uuid)];
  // "Nightly Backup" as before step 4: no UUID, no slug, no UUID entry. "Log rotate" as after
  // the first form of step 4: its UUID in the old index, no slug, no UUID entry.
  for (const [item, keepCode] of [[before, false], [halfway, true]] as const) {
    const { code: _c, slug: _s, ...old } = (await t.kv.get<Service>(key(item.id))).value!;
    await t.kv.set(key(item.id), keepCode ? { ...old, code: item.uuid } : old);
    await t.kv.delete(codeKey(item.uuid));
  }
  await t.kv.set(["services_by_uuid", halfway.uuid], { account: account.id, id: halfway.id });
  for (const n of [4, 5, 6]) await t.kv.delete(["migrations", n]);

  assert.equal(await runMigrations(t.kv, t.clock.now()), MIGRATIONS.length);
  const a = (await t.kv.get<Service>(key(before.id))).value!;
  const b = (await t.kv.get<Service>(key(halfway.id))).value!;
  assert.match(a.code!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(a.code, before.uuid, "a new UUID");
  assert.equal(b.code, halfway.uuid, "the UUID given before is kept");
  assert.deepEqual([a.slug, b.slug], ["nightly-backup", "log-rotate"]);
  for (const s of [a, b]) {
    assert.equal((await serviceByUuid(t.kv, account.id, s.code!))?.id, s.id);
    const ping = await t.req("POST", `/ping/${s.code}`);
    assert.equal(ping.text, "OK");
  }
  const other = await t.account("other@example.org", { name: "Other" });
  assert.equal(await serviceByUuid(t.kv, other.account.id, a.code!), null);
  assert.equal((await Array.fromAsync(t.kv.list({ prefix: ["services_by_uuid"] }))).length, 0);
  // Again: nothing changes.
  const dump = await dumpKv(t.kv);
  for (const n of [4, 5, 6]) await t.kv.delete(["migrations", n]);
  await runMigrations(t.kv, t.clock.now());
  assert.equal(
    (await dumpKv(t.kv)).replace(/"migrations",[^\n]*/g, ""),
    dump.replace(/"migrations",[^\n]*/g, ""),
  );
});

Deno.test("migration 10: channels from before kinds are sealed when the server has its key", async () => {
  await using t = await testApp();
  const old = {
    id: 7,
    account: 1,
    name: "Old hook",
    url: "https://hooks.example/in",
    secret: "s3cret",
    created: "2026-01-01T00:00:00.000Z",
  };
  await t.kv.set(["channels", 1, 7], old);
  await t.kv.set(["channels_sealed"], true);
  const step = MIGRATIONS.findIndex((m) => m.name.startsWith("channels from before kinds"));
  assert.ok(step >= 0);
  await t.kv.delete(["migrations", step + 1]);
  // Without a key it cannot seal: the record stays as it was, and the step is not recorded.
  await runMigrations(t.kv, t.clock.now());
  assert.equal((await t.kv.get(["migrations", step + 1])).value, null);
  assert.deepEqual((await t.kv.get(["channels", 1, 7])).value, old);
  await runMigrations(t.kv, t.clock.now(), { secretsKey: t.deps.config.secretsKey! });
  assert.ok((await t.kv.get(["migrations", step + 1])).value);
  const sealed = (await t.kv.get<Record<string, unknown>>(["channels", 1, 7])).value!;
  assert.equal(sealed.kind, "webhook");
  assert.equal(sealed.hint, "https://hooks.example");
  assert.equal(sealed.url, undefined);
  assert.equal(sealed.secret, undefined);
  assert.ok(!JSON.stringify(sealed).includes("s3cret"));
  assert.equal((await t.kv.get(["channels_sealed"])).versionstamp, null, "the old mark is gone");
  // The channel's secrets open again with the key.
  const { getChannel } = await import("../kv/alerts/channels.ts");
  assert.equal((await getChannel(t.kv, 1, 7))?.name, "Old hook");
});

Deno.test("migrations: a new KV records every step at once and runs none; one with data runs them", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    assert.equal(await runMigrations(kv, 5), MIGRATIONS.length);
    const all = [];
    for await (const e of kv.list({ prefix: [] })) all.push(e);
    // Only the steps' records, all with the same time and one versionstamp: one atomic.
    assert.equal(all.length, MIGRATIONS.length);
    assert.ok(all.every((e) => e.key[0] === "migrations" && (e.value as { at: number }).at === 5));
    assert.equal(new Set(all.map((e) => e.versionstamp)).size, 1);
  } finally {
    kv.close();
  }
  // A KV holding a record from before the steps: each step runs and is recorded on its own.
  const old = await Deno.openKv(":memory:");
  try {
    await old.set(["unrelated"], 1);
    assert.equal(await runMigrations(old, 6), MIGRATIONS.length);
    const stamps = new Set<string>();
    for await (const e of old.list({ prefix: ["migrations"] })) stamps.add(e.versionstamp);
    assert.equal(stamps.size, MIGRATIONS.length);
  } finally {
    old.close();
  }
});
