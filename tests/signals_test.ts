import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { handleQueued } from "../jobs/queue.ts";
import { MINUTE } from "../lib/clock.ts";
import {
  dumpKv,
  serviceEvents as events,
  serviceItem as item,
  T0,
  type TestApp,
  testApp,
} from "./_helpers.ts";

/** Heartbeat signals as Healthchecks speaks them: start, fail, exit codes, log, rid, body. */

async function heartbeat(t: TestApp, token: string, body: Record<string, unknown> = {}) {
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Backup", check: "webhook:", interval: 5, ...body },
  });
  assert.equal(r.status, 200, r.text);
  return { id: r.body.item.id as number, path: new URL(r.body.hook_url).pathname };
}

const RID = "3f2a9c4e-0d6b-4f53-9d2e-6a1c2b7e8f90";

Deno.test("signals: start and success paired by rid, body and origin kept, log changes nothing", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  const start = await t.req("GET", `${hb.path}/start?rid=${RID}`, { from: "198.51.100.23" });
  assert.equal(start.status, 200, start.text);
  assert.equal(start.body.service, "Backup");
  assert.equal((await item(t, token, hb.id)).state, "ok", "a run in progress");
  assert.match((await item(t, token, hb.id)).status, /^running since /);
  t.clock.advance(90_000);
  const out = "x".repeat(2048);
  const end = await t.req("POST", `${hb.path}?rid=${RID}&status=done`, {
    raw: out,
    headers: { "content-type": "text/plain" },
    from: "198.51.100.23",
  });
  assert.equal(end.status, 200);
  const log = await t.req("POST", `${hb.path}/log`, {
    raw: "disk 81 % full",
    headers: { "content-type": "text/plain" },
    from: "2001:db8:5:6::1",
  });
  assert.equal(log.status, 200);
  const s = await item(t, token, hb.id);
  assert.equal(s.state, "ok");
  assert.equal(s.status, "done", "a log line is no state change");
  const ev = await events(t, token, hb.id);
  assert.deepEqual(ev.map((e: { kind: string }) => e.kind), ["log", "success", "start"]);
  assert.equal(ev[1].duration_ms, 90_000);
  assert.equal(ev[1].rid, RID);
  assert.equal(ev[1].body, out);
  assert.equal(ev[1].status, "done");
  assert.equal(ev[1].origin, "198.51.100.x");
  assert.equal(ev[0].body, "disk 81 % full");
  assert.equal(ev[0].origin, "2001:db8:5::/48");
  assert.equal(ev[2].duration_ms, null);
  assert.ok(!JSON.stringify(ev).includes("198.51.100.23"), "never the address");

  // A bad rid is refused and records nothing; an unknown signal is no route.
  const bad = await t.req("GET", `${hb.path}/start?rid=not-a-uuid`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "rid");
  for (const p of ["256", "-1", "abc", "01x"]) {
    assert.equal((await t.req("GET", `${hb.path}/${p}`)).status, 404, p);
  }
  assert.equal((await events(t, token, hb.id)).length, 3);
});

Deno.test("signals: fail and non-zero exit codes turn off at once and mail within the minute", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200);
  await runDueChecks(t.deps); // not due yet: nothing to look at
  t.clock.advance(5 * MINUTE);
  await runDueChecks(t.deps); // the runner's regular look: ok
  t.clock.advance(MINUTE);
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200);
  t.clock.advance(10_000);
  const failed = await t.req("POST", `${hb.path}/fail`, {
    body: { status: "pg_dump: connection refused" },
  });
  assert.equal(failed.status, 200);
  const now = await item(t, token, hb.id);
  assert.equal(now.state, "warn", "late until the look the failure asked for");
  assert.equal(now.status, "pg_dump: connection refused");
  assert.equal(t.mail.sent.length, 0);
  // The failure left the runner a nudge for this minute (and the KV queue a look).
  await runDueChecks(t.deps);
  assert.equal((await item(t, token, hb.id)).state, "off", "off with its alert");
  const mail = t.mail.last("ops@example.org")!;
  assert.match(mail.subject, /"Backup" is off/);
  assert.match(mail.text, /failure signalled .*pg_dump: connection refused/);

  // A success brings it back; the runner (every minute while off and mailed) says so.
  t.clock.advance(MINUTE);
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200);
  assert.equal((await item(t, token, hb.id)).state, "ok");
  await runDueChecks(t.deps);
  assert.match(t.mail.last("ops@example.org")!.subject, /is back/);

  // An exit code other than 0 is a failure too, with its code in the event.
  t.clock.advance(MINUTE);
  assert.equal((await t.req("GET", `${hb.path}/3`)).status, 200);
  await runDueChecks(t.deps);
  assert.equal((await item(t, token, hb.id)).state, "off");
  const ev = await events(t, token, hb.id);
  assert.equal(ev[0].kind, "fail");
  assert.equal(ev[0].code, 3);
  assert.equal(ev.find((e: { kind: string }) => e.kind === "success").code, 0);

  // History has the changes at the signals' times.
  const h = await t.req("GET", `/api/me/services/${hb.id}/history`, { token });
  assert.deepEqual(
    h.body.changes.map((c: { state: string }) => c.state),
    ["ok", "off", "ok", "off"],
  );
});

Deno.test("signals: a start without an end within the grace turns the service off", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token, { interval: 15 });
  await t.req("GET", hb.path);
  t.clock.advance(15 * MINUTE);
  await runDueChecks(t.deps); // regular look at 15 min: ok
  t.clock.advance(MINUTE);
  await t.req("GET", hb.path);
  t.clock.advance(30_000);
  assert.equal((await t.req("GET", `${hb.path}/start`)).status, 200);
  t.clock.advance(13 * MINUTE);
  await runDueChecks(t.deps);
  assert.equal((await item(t, token, hb.id)).state, "ok", "within the grace (the interval)");
  assert.equal(t.mail.sent.length, 0);
  t.clock.advance(3 * MINUTE);
  assert.equal((await item(t, token, hb.id)).state, "warn", "late until the look");
  await runDueChecks(t.deps);
  const s = await item(t, token, hb.id);
  assert.equal(s.state, "off", "16 minutes after the start");
  assert.equal(s.status, "started, no end within the grace time");
  assert.equal(t.mail.sent.length, 1);
  assert.match(t.mail.last("ops@example.org")!.text, /did not end within the grace time/);
});

Deno.test("signals: the last 100 events are kept; deletion removes every signal", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  for (let i = 0; i < 130; i++) {
    const r = await t.req("POST", `${hb.path}/${i % 2 ? "log" : "start"}`, {
      raw: `line ${i}`,
      headers: { "content-type": "text/plain" },
    });
    assert.equal(r.status, 200);
    t.clock.advance(1000);
  }
  const ev = await events(t, token, hb.id);
  assert.equal(ev.length, 100);
  assert.equal(ev[0].body, "line 129");
  assert.equal(ev[99].body, "line 30");
  // The runner's look trims what it keeps; a ping never waits for a trim.
  assert.equal(await storedEvents(t), 130, "kept until the runner looks");
  t.clock.set(Math.ceil(t.clock.now() / (60 * MINUTE)) * 60 * MINUTE + 90 * MINUTE);
  await runDueChecks(t.deps);
  assert.equal(await storedEvents(t), 100, "trimmed by the runner's look");

  // A body over 10 KB is cut at 10 KB, not refused.
  const big = await t.req("POST", hb.path, {
    raw: "é".repeat(8000),
    headers: { "content-type": "text/plain" },
  });
  assert.equal(big.status, 200);
  const kept = (await events(t, token, hb.id))[0].body;
  assert.equal(new TextEncoder().encode(kept).length, 10 * 1024);

  assert.equal((await t.req("DELETE", `/api/me/services/${hb.id}`, { token })).status, 200);
  const dump = await dumpKv(t.kv);
  for (const k of ["service_events", "beat_starts", "beats", "beat_fails"]) {
    assert.ok(!dump.includes(`["${k}"`), k);
  }
});

const storedEvents = async (t: TestApp) =>
  (await dumpKv(t.kv)).split("\n").filter((l) => l.startsWith('["service_events"')).length;

Deno.test("signals: a flood of signals brings the runner within the minute, which trims", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  t.clock.set(Math.floor(t.clock.now() / MINUTE) * MINUTE);
  await runDueChecks(t.deps); // nothing is due: the heartbeat's first look is an interval away
  for (let i = 0; i < 199; i++) {
    const r = await t.req("POST", `${hb.path}/log`, { raw: `line ${i}` });
    assert.equal(r.status, 200);
    t.clock.advance(100);
  }
  await runDueChecks(t.deps);
  assert.equal(await storedEvents(t), 199, "no look before 200 events");
  assert.equal((await t.req("POST", `${hb.path}/log`, { raw: "line 199" })).status, 200);
  await runDueChecks(t.deps);
  assert.equal(await storedEvents(t), 100, "the 200th event nudged the runner, which trimmed");
  const ev = await events(t, token, hb.id);
  assert.equal(ev[0].body, "line 199");
  assert.equal(ev[99].body, "line 100");
});

Deno.test("signals: a failure's queued look leaves the trim to the runner, whose flood nudge it never takes", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  const minute = Math.floor(t.clock.now() / MINUTE) * MINUTE;
  t.clock.set(minute);
  for (let i = 0; i < 199; i++) {
    assert.equal((await t.req("POST", `${hb.path}/log`, { raw: `line ${i}` })).status, 200);
  }
  // The 200th event is a failure: it asks for a look through the queue and nudges the runner.
  assert.equal((await t.req("POST", `${hb.path}/fail`, { raw: "disk full" })).status, 200);
  await handleQueued(t.deps, { look: { account: account.id, id: hb.id, due: minute } });
  assert.equal((await item(t, token, hb.id)).state, "off", "the queued look decided the failure");
  assert.equal(await storedEvents(t), 200, "the queued look read no events to trim");
  t.clock.advance(1_000);
  await runDueChecks(t.deps);
  assert.equal(
    await storedEvents(t),
    100,
    "the flood's nudge was left for the runner, which trimmed",
  );
  assert.equal((await events(t, token, hb.id))[0].body, "disk full");
});

Deno.test("signals: events of one millisecond list in the order they came", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  for (let i = 0; i < 25; i++) {
    assert.equal((await t.req("POST", `${hb.path}/log`, { raw: `line ${i}` })).status, 200);
  }
  const bodies = (await events(t, token, hb.id)).map((e: { body: string }) => e.body);
  assert.deepEqual(bodies, Array.from({ length: 25 }, (_, i) => `line ${24 - i}`));
});

Deno.test("signals: every signal counts towards the 600 an hour", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  t.clock.set(Math.floor(t.clock.now() / (60 * MINUTE)) * 60 * MINUTE);
  const kinds = ["", "/start", "/fail", "/0", "/1", "/log"];
  const calls = [];
  for (let i = 0; i < 600; i++) {
    calls.push(t.req("GET", `${hb.path}${kinds[i % kinds.length]}`, { from: "203.0.113.7" }));
  }
  assert.ok((await Promise.all(calls)).every((a) => a.status === 200));
  assert.equal((await t.req("GET", `${hb.path}/log`, { from: "203.0.113.7" })).status, 429);
  assert.equal((await events(t, token, hb.id)).length, 100);
});

Deno.test("signals: a new heartbeat that succeeded and then fails alerts within the minute, in its first interval", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token, { interval: 60 });
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200);
  t.clock.advance(5_000);
  assert.equal((await t.req("GET", `${hb.path}/1`)).status, 200);
  // The runner has never looked at it (its regular look is an hour away): the nudge does.
  t.clock.advance(MINUTE);
  await runDueChecks(t.deps);
  assert.match(t.mail.last("ops@example.org")!.subject, /"Backup" is off/);
  t.clock.advance(MINUTE);
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200);
  t.clock.advance(MINUTE);
  await runDueChecks(t.deps);
  assert.match(t.mail.last("ops@example.org")!.subject, /"Backup" is back/);
  assert.equal(t.mail.sent.length, 2);
});

Deno.test("signals: a heartbeat whose first signal is a failure alerts; one never called does not", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  const quiet = await heartbeat(t, token, { name: "Never called" });
  assert.equal((await t.req("POST", `${hb.path}/fail`)).status, 200);
  t.clock.advance(MINUTE);
  await runDueChecks(t.deps);
  // The first alert of an outage never waits for others (kv/alerts/alert_groups.ts).
  assert.equal(t.mail.sent.length, 1);
  assert.match(t.mail.last("ops@example.org")!.subject, /"Backup" is off/);
  // A start that outlives its grace with no success before it is a run that failed too.
  const started = await heartbeat(t, token, { name: "Import", interval: 5 });
  assert.equal((await t.req("GET", `${started.path}/start`)).status, 200);
  for (let i = 0; i < 30; i++) {
    t.clock.advance(MINUTE);
    await runDueChecks(t.deps);
  }
  assert.deepEqual(t.mail.sent.map((m) => m.subject), [
    'Watched service "Backup" is off',
    'Watched service "Import" is off',
  ]);
  assert.equal((await item(t, token, quiet.id)).state, "wait");
});

Deno.test("signals: a scheduled heartbeat late in its first interval alerts a minute after turning off", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  // T0 is 09:00; due every five minutes, five minutes of grace; the interval stays 60.
  const hb = await heartbeat(t, token, { interval: 60, schedule: "*/5 * * * *", grace: 5 });
  t.clock.advance(10_000);
  assert.equal((await t.req("GET", hb.path)).status, 200);
  while (t.clock.now() < T0 + 11 * MINUTE) {
    t.clock.advance(MINUTE - (t.clock.now() % MINUTE)); // the runner's whole minutes
    await runDueChecks(t.deps);
    if (t.clock.now() <= T0 + 10 * MINUTE) assert.equal(t.mail.sent.length, 0);
  }
  // Late past 09:05, off past 09:10: mailed at 09:11.
  assert.equal(t.mail.sent.length, 1);
  assert.match(t.mail.last("ops@example.org")!.subject, /"Backup" is off/);
});

Deno.test("signals: a failure that a success closed before the runner looked still alerts off and back", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const hb = await heartbeat(t, token);
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200);
  t.clock.advance(5_000);
  assert.equal(
    (await t.req("POST", `${hb.path}/1`, { body: { status: "disk full" } })).status,
    200,
  );
  t.clock.advance(20_000);
  assert.equal((await t.req("GET", `${hb.path}/0`)).status, 200, "a retry that worked");
  assert.equal((await item(t, token, hb.id)).state, "ok");
  t.clock.advance(MINUTE);
  await runDueChecks(t.deps); // the failure's nudge
  assert.deepEqual(t.mail.sent.map((m) => m.subject), [
    'Watched service "Backup" is off',
    'Watched service "Backup" is back',
  ]);
  assert.match(t.mail.sent[0].text, /failure signalled .*: disk full/);
  const h = await t.req("GET", `/api/me/services/${hb.id}/history`, { token });
  assert.deepEqual(h.body.changes.map((c: { state: string }) => c.state), ["off", "ok"]);
  // Judged once: later looks send nothing more.
  for (let i = 0; i < 12; i++) {
    t.clock.advance(MINUTE);
    await t.req("GET", `${hb.path}/0`);
    await runDueChecks(t.deps);
  }
  assert.equal(t.mail.sent.length, 2);
});
