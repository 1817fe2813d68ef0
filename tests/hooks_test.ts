import { runDueChecks } from "../jobs/checks.ts";
import assert from "node:assert/strict";
import { atomic, openKv } from "../kv/_atomic.ts";
import { flushBeats, forgetHooks, type HookRef } from "../kv/service/heartbeats.ts";
import { MINUTE } from "../lib/clock.ts";
import { aroundCommits, dumpKv, type Res, testApp } from "./_helpers.ts";

type T = Awaited<ReturnType<typeof testApp>>;

async function heartbeat(t: T, token: string, interval = 5) {
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:", interval, group: "Jobs" },
  });
  assert.equal(r.status, 200, r.text);
  const path = new URL(r.body.hook_url).pathname;
  return { id: r.body.item.id as number, path, key: path.split("/").pop()!, item: r.body.item };
}

const stateOf = async (t: T, token: string, id: number) =>
  (await t.req("GET", "/api/me/services", { token })).body.items.find((
    s: { id: number },
  ) => s.id === id);

Deno.test("hooks: a heartbeat service gets a hook_url once; only its hash is stored", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  assert.match(hb.key, /^[A-Za-z0-9_-]{43}$/, "256 random bits");
  assert.ok(hb.path.startsWith("/api/hooks/"));
  assert.equal(hb.item.state, "wait");
  assert.equal(hb.item.kind, "webhook");
  assert.equal(hb.item.target_hint, null);
  assert.equal(hb.item.ms, null);
  assert.ok(!(await dumpKv(t.kv)).includes(hb.key), "the key itself is never stored");
  const list = await t.req("GET", "/api/me/services", { token });
  assert.ok(!list.text.includes("hook_url") && !list.text.includes(hb.key));
  const patched = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { name: "Backup" },
  });
  assert.equal(patched.status, 200);
  assert.ok(!patched.text.includes("hook_url"));
});

Deno.test("hooks: GET and POST record a beat with its status text", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  const g = await t.req("GET", `${hb.path}?status=${encodeURIComponent("backup done: 3 GB")}`);
  assert.equal(g.status, 200);
  assert.deepEqual(g.body, {
    ok: true,
    service: "Nightly backup",
    received: new Date(t.clock.now()).toISOString(),
  });
  let s = await stateOf(t, token, hb.id);
  assert.equal(s.state, "ok");
  assert.equal(s.status, "backup done: 3 GB");
  assert.equal(s.beat, g.body.received);
  assert.equal(s.checked, null);

  t.clock.advance(1000);
  const p = await t.req("POST", hb.path, { body: { status: "x".repeat(300) } });
  assert.equal(p.status, 200);
  s = await stateOf(t, token, hb.id);
  assert.equal(s.status, "x".repeat(120), "status kept up to 120 characters");
  assert.equal(s.beat, new Date(t.clock.now()).toISOString());

  const bare = await t.req("POST", hb.path);
  assert.equal(bare.status, 200);
  assert.equal((await stateOf(t, token, hb.id)).status, "");

  const badJson = await t.req("POST", hb.path, {
    raw: "{nope",
    headers: { "content-type": "application/json" },
  });
  assert.equal(badJson.status, 400);
  const badType = await t.req("POST", hb.path, { body: { status: 5 } });
  assert.equal(badType.status, 400);
  assert.match(badType.body.error, /^status/);
});

Deno.test("hooks: HEAD answers 405 and records no beat", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  const head = await t.app.request(hb.path, { method: "HEAD" });
  assert.equal(head.status, 405);
  assert.equal(head.headers.get("allow"), "GET, POST");
  assert.equal((await stateOf(t, token, hb.id)).state, "wait");
  assert.equal((await t.req("GET", hb.path)).status, 200);
  assert.equal((await stateOf(t, token, hb.id)).state, "ok");
});

Deno.test("hooks: the status keeps 120 characters, not UTF-16 units, and stays text", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  // 131 characters, 261 UTF-16 units: a cut by units kept 60 emoji and half of another.
  const r = await t.req("POST", hb.path, { body: { status: "a" + "\u{1F600}".repeat(130) } });
  assert.equal(r.status, 200);
  let s = (await stateOf(t, token, hb.id)).status as string;
  assert.equal(s, "a" + "\u{1F600}".repeat(119));
  assert.ok(s.isWellFormed());
  const q = await t.req("GET", `${hb.path}?status=${encodeURIComponent("\u{1F600}".repeat(120))}`);
  assert.equal(q.status, 200);
  s = (await stateOf(t, token, hb.id)).status;
  assert.equal(s, "\u{1F600}".repeat(120), "120 emoji are 120 characters: all kept");
  const lone = await t.req("POST", hb.path, { body: { status: "ok \ud800" } });
  assert.equal(lone.status, 200);
  assert.equal((await stateOf(t, token, hb.id)).status, "ok \ufffd");
});

Deno.test("hooks: state boundaries exactly at 1x and 2x the interval", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token, 15);
  assert.equal((await stateOf(t, token, hb.id)).state, "wait");
  t.clock.advance(3 * 60 * MINUTE);
  assert.equal((await stateOf(t, token, hb.id)).state, "wait", "never beaten stays wait");
  assert.equal((await t.req("GET", hb.path)).status, 200);
  const i = 15 * MINUTE;
  const at = async (ms: number) => {
    const base = t.clock.now();
    t.clock.advance(ms);
    const s = (await stateOf(t, token, hb.id)).state;
    t.clock.set(base);
    return s;
  };
  assert.equal(await at(0), "ok");
  assert.equal(await at(i), "ok");
  assert.equal(await at(i + 1), "warn");
  assert.equal(await at(2 * i), "warn");
  // Off once the runner's look found it so (its alert on its way), which it does then.
  assert.equal(await at(2 * i + 1), "warn", "late until the look");
  t.clock.advance(2 * i + 1);
  await runDueChecks(t.deps);
  assert.equal((await stateOf(t, token, hb.id)).state, "off");
});

Deno.test("hooks: unknown and malformed keys answer 404", async () => {
  await using t = await testApp();
  for (const k of ["x", "A".repeat(43), "A".repeat(44), "%00"]) {
    const r = await t.req("GET", `/api/hooks/${k}`);
    assert.equal(r.status, 404, k);
    assert.equal(typeof r.body.error, "string");
  }
});

Deno.test("hooks: rotate gives a new key and the old one stops at once", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const other = await t.account("other@example.org", { name: "Other" });
  const hb = await heartbeat(t, token);
  assert.equal((await t.req("GET", hb.path)).status, 200); // now cached
  assert.equal(
    (await t.req("POST", `/api/me/services/${hb.id}/rotate`, { token: other.token })).status,
    404,
  );
  const r = await t.req("POST", `/api/me/services/${hb.id}/rotate`, { token });
  assert.equal(r.status, 200);
  const next = new URL(r.body.hook_url).pathname;
  assert.notEqual(next, hb.path);
  assert.equal((await t.req("GET", hb.path)).status, 404);
  assert.equal((await t.req("GET", next)).status, 200);
});

Deno.test("hooks: deleting the service stops its key; nothing of it is left", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const before = await dumpKv(t.kv);
  const hb = await heartbeat(t, token);
  assert.equal((await t.req("GET", hb.path)).status, 200);
  assert.equal((await t.req("DELETE", `/api/me/services/${hb.id}`, { token })).status, 200);
  assert.equal((await t.req("GET", hb.path)).status, 404);
  // Its first success asked for a look: the runner finds that nudge without its service and
  // drops it (kv/service/store.ts).
  await runDueChecks(t.deps);
  const after = (await dumpKv(t.kv)).split("\n")
    .filter((l) =>
      !l.startsWith('["rate"') &&
      !l.startsWith('["ids","service"')
    );
  assert.deepEqual(after, before.split("\n"));
});

Deno.test("hooks: 600 calls an hour per address, then 429 with Retry-After", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  t.clock.set(Math.floor(t.clock.now() / (60 * MINUTE)) * 60 * MINUTE + 10 * MINUTE);
  const calls = [];
  for (let i = 0; i < 600; i++) {
    calls.push(t.req("GET", i % 2 ? hb.path : "/api/hooks/unknown", { from: "203.0.113.9" }));
  }
  const answers = await Promise.all(calls);
  assert.ok(answers.every((a) => a.status === 200 || a.status === 404));
  const over = await t.req("GET", hb.path, { from: "203.0.113.9" });
  assert.equal(over.status, 429);
  // 600 an hour over the hour that ends now: the first comes back 6 s past the clock hour.
  assert.equal(over.headers.get("retry-after"), String(50 * 60 + 6));
  assert.equal((await t.req("GET", hb.path, { from: "203.0.113.10" })).status, 200);
  t.clock.advance(50 * MINUTE);
  const edge = await t.req("GET", hb.path, { from: "203.0.113.9" });
  assert.equal(edge.status, 429, "the clock hour's edge lets no second 600 through");
  assert.equal(edge.headers.get("retry-after"), "6");
  t.clock.advance(6000);
  assert.equal((await t.req("GET", hb.path, { from: "203.0.113.9" })).status, 200);
  assert.equal((await t.req("GET", hb.path, { from: "203.0.113.9" })).status, 429);
});

Deno.test("hooks: an IPv6 client counts by its /64", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  t.clock.set(Math.floor(t.clock.now() / (60 * MINUTE)) * 60 * MINUTE);
  // 600 calls spread over many addresses of one /64 use up that /64's hour.
  for (let i = 0; i < 600; i += 50) {
    const batch = [];
    for (let j = i; j < i + 50; j++) {
      batch.push(t.req("GET", hb.path, { from: `2001:db8:1:2::${(j + 1).toString(16)}` }));
    }
    assert.ok((await Promise.all(batch)).every((a) => a.status === 200));
  }
  assert.equal((await t.req("GET", hb.path, { from: "2001:db8:1:2:ffff::1" })).status, 429);
  assert.equal((await t.req("GET", hb.path, { from: "2001:db8:1:3::1" })).status, 200);
});

Deno.test("hooks: concurrent pings share commits and each is durable when answered", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hooks = [];
  for (let i = 0; i < 20; i++) hooks.push(await heartbeat(t, token));
  const answers = await Promise.all(
    hooks.flatMap((h, i) => [0, 1, 2].map((n) => t.req("GET", `${h.path}?status=${i}-${n}`))),
  );
  assert.ok(answers.every((a) => a.status === 200));
  const items = (await t.req("GET", "/api/me/services", { token })).body.items;
  for (const [i, h] of hooks.entries()) {
    const s = items.find((x: { id: number }) => x.id === h.id);
    assert.equal(s.state, "ok");
    assert.match(s.status, new RegExp(`^${i}-[012]$`));
  }
});

/** The heartbeat counts of every address in KV, summed. */
async function countedInKv(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const e of kv.list<Deno.KvU64>({ prefix: ["rate"] })) {
    if (e.key[2] === "heartbeat") n += Number(e.value.value);
  }
  return n;
}

Deno.test("hooks: a quiet process writes a ping's count with it; steady traffic writes counts together", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  assert.equal((await t.req("GET", hb.path, { from: "203.0.113.9" })).status, 200);
  assert.equal(await countedInKv(t.kv), 1, "the first ping's count is in KV when it is answered");
  for (let i = 0; i < 4; i++) {
    assert.equal((await t.req("GET", hb.path, { from: "203.0.113.9" })).status, 200);
  }
  assert.equal(await countedInKv(t.kv), 1, "the next seconds' counts wait in process");
  await flushBeats(t.kv);
  assert.equal(await countedInKv(t.kv), 5, "SIGTERM's flush writes them");
  // Counted in process all along: the limit itself never waited for KV.
  for (let i = 0; i < 595; i++) await t.req("GET", hb.path, { from: "203.0.113.9" });
  assert.equal((await t.req("GET", hb.path, { from: "203.0.113.9" })).status, 429);
});

/** One ping to `path` from each of `n` addresses (each address's count waits in process). */
async function pingFromEach(t: T, path: string, n: number) {
  for (let i = 0; i < n; i++) {
    const from = `10.0.${i >> 8}.${i & 255}`;
    assert.equal((await t.req("GET", path, { from })).status, 200);
  }
}

Deno.test("hooks: counts waiting in process take only the room a batch leaves, a run ended by its id too", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const job = await heartbeat(t, token);
  const other = await heartbeat(t, token);
  const rid = crypto.randomUUID();
  assert.equal((await t.req("GET", `${job.path}/start?rid=${rid}`)).status, 200);
  // 997 addresses counted in process, their counts waiting for the next batch that has room.
  await pingFromEach(t, other.path, 997);
  t.clock.advance(11_000);
  // The run's end writes its start again besides its beat, event and look: with 997 counts due,
  // the batch is more than KV's 1 000 mutations unless the counts wait for the next one.
  const end = await t.req("GET", `${job.path}?rid=${rid}`);
  assert.equal(end.status, 200, end.text);
  await flushBeats(t.kv);
  assert.equal(await countedInKv(t.kv), 999, "every ping counted once, none lost or twice");
});

Deno.test("hooks: a hook another process changed before the commit writes more; the counts still fit", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const job = await heartbeat(t, token);
  const other = await heartbeat(t, token);
  const refs = async () => {
    const out: Deno.KvEntry<HookRef>[] = [];
    for await (const e of t.kv.list<HookRef>({ prefix: ["hooks"] })) {
      if (e.value.id === job.id) out.push(e);
    }
    return out;
  };
  const setLook = async (look: boolean) => {
    for (const e of await refs()) await t.kv.set(e.key, { ...e.value, look });
  };
  // This process holds the hook as asking for no look on a success.
  await setLook(false);
  forgetHooks(t.kv);
  assert.equal((await t.req("GET", job.path)).status, 200);
  await pingFromEach(t, other.path, 997);
  // Another process changes the hook: read again at the commit, its success now asks for a look
  // (two writes more than the batch was taken for), beside 997 counts due.
  await setLook(true);
  t.clock.advance(11_000);
  const ping = await t.req("GET", job.path);
  assert.equal(ping.status, 200, ping.text);
  await flushBeats(t.kv);
  assert.equal(await countedInKv(t.kv), 999, "every ping counted once, none lost or twice");
});

Deno.test("hooks: counts waiting in process go with the next batch once the clock was set back", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  for (const from of ["203.0.113.1", "203.0.113.2", "203.0.113.3"]) {
    assert.equal((await t.req("GET", hb.path, { from })).status, 200);
  }
  assert.equal(await countedInKv(t.kv), 1, "the counts after the first wait in process");
  // The system's time set back a minute: the wait is not counted from a moment still to come.
  t.clock.advance(-60_000);
  assert.equal((await t.req("GET", hb.path, { from: "203.0.113.4" })).status, 200);
  assert.equal(await countedInKv(t.kv), 4);
});

Deno.test("hooks: a batch of every signal of 90 hooks from 360 addresses stays within an atomic's writes", async () => {
  await using t = await testApp();
  const hooks = [];
  for (let a = 0; a < 3; a++) {
    const { token } = await t.account(`cron${a}@example.org`, { name: "Cron" });
    for (let i = 0; i < 30; i++) hooks.push(await heartbeat(t, token));
  }
  // Every hook in this process's cache, so the signals below queue together.
  for (const h of hooks) assert.equal((await t.req("GET", h.path)).status, 200);
  let from = 0;
  const answers = await Promise.all(
    hooks.flatMap((h) =>
      ["", "/start", "/fail", "/log"].map((signal) =>
        t.req("GET", `${h.path}${signal}`, { from: `198.51.100.${from++ % 250}` })
      )
    ),
  );
  assert.deepEqual(answers.filter((a) => a.status !== 200).map((a) => a.text), []);
});

Deno.test("hooks: runs of 90 hooks ended by their rid at once stay within an atomic's checks", async () => {
  await using t = await testApp();
  const hooks = [];
  for (let a = 0; a < 3; a++) {
    const { token } = await t.account(`runs${a}@example.org`, { name: "Runs" });
    for (let i = 0; i < 30; i++) hooks.push({ token, ...await heartbeat(t, token) });
  }
  const rids = hooks.map(() => crypto.randomUUID());
  // Each start in this process's cache and in KV, so the ends below queue together and each
  // reads its service's pulse (three checks) beside its hook's (one).
  for (const [i, h] of hooks.entries()) {
    assert.equal((await t.req("GET", `${h.path}/start?rid=${rids[i]}`)).status, 200);
  }
  t.clock.advance(30_000);
  let from = 0;
  const ends = await Promise.all(
    hooks.map((h, i) =>
      t.req("GET", `${h.path}?rid=${rids[i]}`, { from: `198.51.100.${from++ % 250}` })
    ),
  );
  assert.deepEqual(ends.filter((a) => a.status !== 200).map((a) => a.text), []);
  for (const h of [hooks[0], hooks[45], hooks[89]]) {
    const ev = (await t.req("GET", `/api/me/services/${h.id}/events`, { token: h.token })).body;
    assert.equal(ev.items[0].kind, "success");
    assert.equal(ev.items[0].duration_ms, 30_000, "the end paired with its start");
  }
});

Deno.test("hooks: a rotation by another process stops the old key in this one", async () => {
  const path = await Deno.makeTempFile({ suffix: ".sqlite3" });
  try {
    await using a = await testApp();
    await using b = await testApp();
    // Point both apps at one KV file, as two server processes would be.
    const kvA = await openKv(path);
    const kvB = await openKv(path);
    Object.assign(a.deps, { kv: kvA });
    Object.assign(b.deps, { kv: kvB });
    const { token } = await (async () => {
      const { transact } = await import("../kv/_atomic.ts");
      const { prepareAccount } = await import("../kv/accounts/accounts.ts");
      const { prepareSession } = await import("../kv/accounts/sessions.ts");
      return await transact(async () => {
        const acc = await prepareAccount(kvA, "cron@example.org", "Cron", a.clock.now(), []);
        const s = await prepareSession(kvA, acc.account.id, a.clock.now());
        return { op: s.apply(acc.apply(atomic(kvA))), result: { token: s.token } };
      });
    })();
    const hb = await heartbeat(a, token);
    assert.equal((await a.req("GET", hb.path)).status, 200); // cached in a
    assert.equal((await b.req("GET", hb.path)).status, 200); // and in b
    const r = await b.req("POST", `/api/me/services/${hb.id}/rotate`, { token });
    assert.equal(r.status, 200);
    assert.equal((await a.req("GET", hb.path)).status, 404, "old key stops in the other process");
    assert.equal((await a.req("GET", new URL(r.body.hook_url).pathname)).status, 200);
    kvA.close();
    kvB.close();
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("hooks: pings racing a deletion leave no beat behind", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  for (let round = 0; round < 5; round++) {
    const hb = await heartbeat(t, token);
    assert.equal((await t.req("GET", hb.path)).status, 200);
    const pings = Array.from({ length: 20 }, () => t.req("GET", hb.path));
    const del = t.req("DELETE", `/api/me/services/${hb.id}`, { token });
    const more = Array.from({ length: 20 }, () => t.req("GET", hb.path));
    assert.equal((await del).status, 200);
    for (const r of await Promise.all([...pings, ...more])) {
      assert.ok(r.status === 200 || r.status === 404, String(r.status));
    }
    assert.equal((await t.req("GET", hb.path)).status, 404);
    const dump = await dumpKv(t.kv);
    assert.ok(!dump.includes(`["beats",`), `round ${round}: a beat outlived its service`);
  }
});

Deno.test("hooks: other accounts' hook changes racing every ping batch never fail a ping", async () => {
  await using t = await testApp();
  const a = await t.account("cron@example.org", { name: "Cron" });
  const b = await t.account("other@example.org", { name: "Other" });
  const mine = await heartbeat(t, a.token);
  const theirs = await heartbeat(t, b.token);
  const { patchService } = await import("../kv/service/commands.ts");
  const raw = t.deps.kv;
  let races = 0;
  // Right before each beat commit, the other account renames its heartbeat service, as a
  // busy service's other users would: the worst interleaving for a shared generation key.
  const racing = aroundCommits(raw, async (commit, sets) => {
    if (sets.some((key) => key[0] === "beats")) {
      races++;
      await patchService({ ...t.deps, kv: raw }, b.account.id, theirs.id, {
        name: `Other ${races}`,
      });
    }
    return await commit();
  });
  Object.assign(t.deps, { kv: racing });
  const answers = await Promise.all(
    Array.from({ length: 5 }, (_, i) => t.req("GET", `${mine.path}?status=${i}`)),
  );
  Object.assign(t.deps, { kv: raw });
  assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200]);
  assert.ok(races > 0);
  assert.equal((await stateOf(t, a.token, mine.id)).state, "ok");
});

Deno.test("hooks: a rename by another process reaches this one's answer at once", async () => {
  await using t = await testApp();
  const { token, account } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  assert.equal((await t.req("GET", hb.path)).body.service, "Nightly backup"); // cached
  // Another process renames it: straight to KV, this process's cache is not told.
  const { hookKey } = await import("../kv/service/heartbeats.ts");
  const { sha256hex } = await import("../lib/crypto.ts");
  await t.kv.set(hookKey(sha256hex(hb.key)), { account: account.id, id: hb.id, name: "Renamed" });
  assert.equal((await t.req("GET", hb.path)).body.service, "Renamed");
  await t.kv.delete(hookKey(sha256hex(hb.key)));
  assert.equal((await t.req("GET", hb.path)).status, 404);
});

Deno.test("hooks: a ping with a length (read whole) answers as one streamed (read in chunks)", async () => {
  await using t = await testApp();
  const { token } = await t.account("cron@example.org", { name: "Cron" });
  const hb = await heartbeat(t, token);
  const rid = "3f2a9c4e-0d6b-4f53-9d2e-6a1c2b7e8f90";
  const unknown = `/api/hooks/${"x".repeat(43)}`;
  // [method, path, body, content type, status]
  const cases: [string, string, string, string, number][] = [
    ["POST", hb.path, '{"status":"from json"}', "application/json", 200],
    ["POST", `${hb.path}/start?rid=${rid}`, "", "text/plain", 200],
    ["POST", `${hb.path}?rid=${rid}`, "log of the run\n".repeat(1000), "text/plain", 200],
    ["POST", `${hb.path}/7?status=exit%207`, "", "text/plain", 200],
    ["POST", hb.path, "not json{", "application/json", 400],
    ["POST", hb.path, "[1]", "application/json", 400],
    ["POST", hb.path, '{"status":5}', "application/json", 400],
    ["POST", `${hb.path}?rid=nope`, "", "text/plain", 400],
    ["POST", unknown, "", "text/plain", 404],
  ];
  const seen = (r: Res) => ({
    status: r.status,
    body: { ...r.body, received: typeof r.body.received },
    type: r.headers.get("content-type"),
    cache: r.headers.get("cache-control"),
    retry: r.headers.get("retry-after"),
    nosniff: r.headers.get("x-content-type-options"),
  });
  for (const [method, path, body, type, status] of cases) {
    const bytes = new TextEncoder().encode(body);
    const headers = { "content-type": type };
    // A body with a length is read at once; the same bytes as a stream (no length) in chunks.
    const fast = await t.req(method, path, {
      raw: bytes,
      headers: { ...headers, "content-length": String(bytes.length) },
    });
    const routed = await t.req(method, path, { raw: ReadableStream.from([bytes]), headers });
    assert.equal(fast.status, status, `${path}: ${fast.text}`);
    assert.deepEqual(seen(fast), seen(routed), `${method} ${path}`);
  }
  const gets: [string, number][] = [
    [`${hb.path}?status=fine`, 200],
    [`${hb.path}/log`, 200],
    [`${hb.path}?rid=nope`, 400],
    [unknown, 404],
  ];
  for (const [path, status] of gets) {
    const r = await t.req("GET", path);
    assert.equal(r.status, status, path);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  }
  // Every accepted POST was stored, either way: 4 cases twice, plus the GETs' 2.
  const events = (await t.req("GET", `/api/me/services/${hb.id}/events`, { token })).body;
  assert.equal(
    events.items.length,
    10,
    JSON.stringify(events.items.map((e: { kind: string }) => e.kind)),
  );
});
