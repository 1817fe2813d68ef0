import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { MINUTE } from "../lib/clock.ts";
import { cronError, nextDueAfter } from "../lib/schedule.ts";
import { fakeResolver, type TestApp, testApp } from "./_helpers.ts";

/** Cron schedules of heartbeats (Healthchecks' semantics) with the injected clock. */

async function heartbeat(t: TestApp, token: string, body: Record<string, unknown>) {
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:", ...body },
  });
  assert.equal(r.status, 200, r.text);
  return { item: r.body.item, path: new URL(r.body.hook_url).pathname };
}

async function stateOf(t: TestApp, token: string, id: number) {
  const r = await t.req("GET", "/api/me/services", { token });
  return r.body.items.find((x: { id: number }) => x.id === id);
}

Deno.test("schedule: bad expressions, zones and kinds answer 400 naming the field", async () => {
  // example.org resolves (no connection is made: the schedule is refused first).
  await using t = await testApp({ resolver: fakeResolver({ "example.org": ["93.184.216.34"] }) });
  const { token } = await t.account("a@example.org", { name: "A" });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ schedule: "61 * * * *" }, "schedule", /not a valid cron expression/],
    [{ schedule: "0 0 * * * *" }, "schedule", /5 fields/],
    [{ schedule: "0 3 30 2 *" }, "schedule", /never comes due/],
    [{ schedule: "" }, "schedule", /must not be empty/],
    [{ schedule: "0 3 * * *", tz: "Mars/Olympus" }, "tz", /time zone/],
    [{ schedule: "0 3 * * *", grace: 0 }, "grace", /./],
    [{ schedule: "0 3 * * *", check: "tcp:example.org:22" }, "schedule", /only a heartbeat/],
  ];
  for (const [body, field, msg] of cases) {
    const r = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "X1", check: "webhook:", ...body },
    });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.field, field, JSON.stringify(body));
    assert.match(r.body.error, msg);
  }
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 0);
  assert.equal(cronError("*/15 9-17 * * mon-fri"), null);
});

Deno.test("schedule: due at each scheduled time across a daylight-saving change (New York)", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const { item, path } = await heartbeat(t, token, {
    schedule: "0 9 * * *",
    tz: "America/New_York",
    grace: 60,
  });
  assert.equal(item.schedule, "0 9 * * *");
  assert.equal(item.tz, "America/New_York");
  assert.equal(item.grace, 60);
  assert.equal(item.state, "wait");

  // Saturday 7 March 2026, 09:05 EST (14:05 UTC): the run reports.
  t.clock.set(Date.parse("2026-03-07T14:05:00Z"));
  assert.equal((await t.req("GET", path)).status, 200);
  await runDueChecks(t.deps); // the runner looks once it has beaten (ok)
  // On Sunday 8 March clocks go forward: 09:00 EDT is 13:00 UTC, an hour earlier than a
  // day after the last run.
  assert.equal(
    nextDueAfter({ cron: "0 9 * * *", tz: "America/New_York" }, t.clock.now()),
    Date.parse("2026-03-08T13:00:00Z"),
  );
  t.clock.set(Date.parse("2026-03-08T12:59:00Z"));
  assert.equal((await stateOf(t, token, item.id)).state, "ok");
  t.clock.set(Date.parse("2026-03-08T13:30:00Z"));
  assert.equal((await stateOf(t, token, item.id)).state, "warn", "late, within the grace");
  t.clock.set(Date.parse("2026-03-08T14:00:00Z"));
  assert.equal((await stateOf(t, token, item.id)).state, "warn", "the grace's last moment");
  t.clock.set(Date.parse("2026-03-08T14:01:00Z"));
  assert.equal((await stateOf(t, token, item.id)).state, "off");
  // A fixed 24-hour interval would still say ok here (the run was 23 h 56 min ago).

  // The runner mails the off state within a minute of it.
  t.clock.set(Date.parse("2026-03-08T14:02:00Z"));
  await runDueChecks(t.deps);
  const off = t.mail.last("ops@example.org");
  assert.ok(off, "an off mail");
  assert.match(off.subject, /"Nightly backup" is off/);

  // The run reports late; then the next due time is Monday 09:00 EDT.
  t.clock.set(Date.parse("2026-03-08T14:10:00Z"));
  await t.req("GET", path);
  assert.equal((await stateOf(t, token, item.id)).state, "ok");
  t.clock.set(Date.parse("2026-03-09T13:59:00Z"));
  assert.equal((await stateOf(t, token, item.id)).state, "warn");
  t.clock.set(Date.parse("2026-03-09T14:00:01Z"));
  assert.equal((await stateOf(t, token, item.id)).state, "off");
});

Deno.test("schedule: PATCH sets, moves and removes a schedule; the runner follows", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const { item, path } = await heartbeat(t, token, { interval: 60 });
  assert.equal(item.schedule, null);
  await t.req("GET", path);
  const set = await t.req("PATCH", `/api/me/services/${item.id}`, {
    token,
    body: { schedule: "*/10 * * * *", grace: 5 },
  });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.body.item.schedule, "*/10 * * * *");
  assert.equal(set.body.item.tz, "UTC");
  assert.equal(set.body.item.grace, 5);
  const tzOnly = await t.req("PATCH", `/api/me/services/${item.id}`, {
    token,
    body: { tz: "Europe/Berlin" },
  });
  assert.equal(tzOnly.body.item.tz, "Europe/Berlin");
  assert.equal(tzOnly.body.item.schedule, "*/10 * * * *");
  await runDueChecks(t.deps); // a new schedule: the runner looks at once (ok)
  const badTz = await t.req("PATCH", `/api/me/services/${item.id}`, {
    token,
    body: { tz: "Nowhere/Land" },
  });
  assert.equal(badTz.status, 400);
  assert.equal(badTz.body.field, "tz");

  // T0 is 09:00 UTC: due 09:10, off after 09:15.
  t.clock.advance(16 * MINUTE);
  assert.equal((await stateOf(t, token, item.id)).state, "off");
  await runDueChecks(t.deps);
  assert.match(t.mail.last("ops@example.org")!.subject, /is off/);

  const cleared = await t.req("PATCH", `/api/me/services/${item.id}`, {
    token,
    body: { schedule: null },
  });
  assert.equal(cleared.body.item.schedule, null);
  assert.equal(cleared.body.item.state, "ok", "back on the 60-minute interval");
  const stray = await t.req("PATCH", `/api/me/services/${item.id}`, {
    token,
    body: { grace: 10 },
  });
  assert.equal(stray.status, 400);
});
