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
    [
      { schedule: "61 * * * *" },
      "schedule",
      /a field cannot be read \(minute 0-59.*02:00 every Sunday$/,
    ],
    [{ schedule: "0 0 * * * *" }, "schedule", /not a cron line of five fields, nor an OnCalendar/],
    [{ schedule: "Mon 25:00" }, "schedule", /nor an OnCalendar expression \(bad hour\)/],
    [{ schedule: "1999-01-01" }, "schedule", /never comes due/],
    [{ schedule: "0 3 30 2 *" }, "schedule", /never comes due/],
    [{ schedule: "" }, "schedule", /must not be empty/],
    [{ schedule: "0 3 * * *", tz: "Mars/Olympus" }, "tz", /time zone/],
    [{ schedule: "0 3 * * *", grace: 0 }, "grace", /./],
    [{ schedule: "0 3 * * *", check: "tcp:example.org:22" }, "schedule", /only a heartbeat/],
    // A time zone or grace without a schedule would be dropped: refused, naming it.
    [{ tz: "Europe/Berlin" }, "tz", /^tz: a time zone goes with a schedule/],
    [{ grace: 30 }, "grace", /^grace: a grace time goes with a schedule/],
    [{ schedule: null, tz: "UTC", grace: 5 }, "tz", /goes with a schedule/],
    [{ check: "tcp:example.org:22", grace: 5 }, "grace", /goes with a schedule/],
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
  // Off past the grace (a fixed 24-hour interval would still say ok here: the run was
  // 23 h 56 min ago), once the runner's look, due the millisecond after, found it so.
  assert.equal((await stateOf(t, token, item.id)).state, "warn");
  await runDueChecks(t.deps);
  assert.equal((await stateOf(t, token, item.id)).state, "off");
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
  await runDueChecks(t.deps);
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
  await runDueChecks(t.deps);
  assert.equal((await stateOf(t, token, item.id)).state, "off");
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
  assert.equal(stray.body.field, "grace");
  const dropped = await t.req("PATCH", `/api/me/services/${item.id}`, {
    token,
    body: { schedule: null, tz: "Europe/Berlin" },
  });
  assert.equal(dropped.status, 400);
  assert.equal(dropped.body.field, "tz");
});

Deno.test("schedule: the form puts a time zone or grace without a schedule beside its field", async () => {
  await using t = await testApp();
  const { token } = await t.account("ops@example.org", { name: "Ops" });
  const post = (path: string, fields: Record<string, string>) =>
    t.req("POST", path, {
      raw: new URLSearchParams(fields).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://localhost",
        cookie: `session=${token}`,
      },
    });
  const base = { name: "Backup", kind: "webhook", group: "Public", interval: "60", threshold: "1" };
  // The empty form suggests no zone or grace: an untouched form adds a plain heartbeat.
  const blank = await t.req("GET", "/me/services/new?kind=webhook", {
    headers: { cookie: `session=${token}` },
  });
  assert.match(blank.text, /<input[^>]*name="tz"(?![^>]*value="[^"])/);
  const lone = await post("/me/services", { ...base, schedule: "", tz: "Europe/Berlin" });
  assert.equal(lone.status, 400);
  assert.match(
    lone.text,
    /id="[^"]*tz[^"]*-error">A time zone goes with a schedule; without one the interval applies\.</,
  );
  assert.match(lone.text, /name="tz"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*name="tz"/);
  const graceOnly = await post("/me/services", { ...base, schedule: "", grace: "30" });
  assert.equal(graceOnly.status, 400);
  assert.match(graceOnly.text, /-error">A grace time goes with a schedule/);
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items.length, 0);

  // With a schedule both are kept; emptying the schedule on the edit form takes them away.
  const made = await post("/me/services", { ...base, schedule: "0 3 * * *", tz: "Europe/Berlin" });
  assert.equal(made.status, 303, "the hook address is shown on the page after the redirect");
  const [s] = (await t.req("GET", "/api/me/services", { token })).body.items;
  assert.equal(s.tz, "Europe/Berlin");
  assert.equal(s.grace, 60);
  const page = await t.req("GET", `/me/services/${s.id}`, {
    headers: { cookie: `session=${token}` },
  });
  assert.match(page.text, /name="had_schedule"/);
  const cleared = await post(`/me/services/${s.id}`, {
    ...base,
    schedule: "",
    tz: "Europe/Berlin",
    grace: "60",
    had_schedule: "1",
  });
  assert.equal(cleared.status, 303, cleared.text);
  const after = (await t.req("GET", "/api/me/services", { token })).body.items[0];
  assert.equal(after.schedule, null);
  // Now without a schedule: a grace typed into the edit form is refused beside its field.
  const stray = await post(`/me/services/${s.id}`, { ...base, schedule: "", grace: "15" });
  assert.equal(stray.status, 400);
  assert.match(stray.text, /-error">A grace time goes with a schedule/);
  assert.equal((await t.req("GET", "/api/me/services", { token })).body.items[0].grace, null);
});
