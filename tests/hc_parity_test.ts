import assert from "node:assert/strict";
import { MINUTE } from "../lib/clock.ts";
import { fakeResolver, type Res, type TestApp, testApp } from "./_helpers.ts";
import { MINUTELY, runJobs } from "../jobs/mod.ts";

/**
 * Healthchecks' own expectations (hc/api/tests/test_create_check.py, test_update_check.py,
 * test_ping.py, test_get_pings.py) for periods, grace, run ids and ping methods, app-level.
 */

async function rwKey(t: TestApp, email: string) {
  const { token, account } = await t.account(email, { name: "Keeper" });
  const r = await t.req("POST", "/api/me/api-keys", { token, body: { name: "ci" } });
  assert.equal(r.status, 201, r.text);
  return { token, account, rw: r.body.key as string };
}

const hc = (t: TestApp, method: string, path: string, key: string, body?: unknown) =>
  t.req(method, path, {
    headers: { "X-Api-Key": key },
    ...(body === undefined ? {} : { raw: JSON.stringify(body) }),
  });

const ok = (r: Res, status = 200) => assert.equal(r.status, status, r.text);

Deno.test("periods: any timeout and grace from 60 s to 365 days, kept exactly, judged exactly", async () => {
  await using t = await testApp();
  const { token, rw } = await rwKey(t, "p@example.org");
  // test_create_check.py: timeout 60 and 31536000 and grace 31536000 are taken; ten minutes,
  // a week (Terraform's and Ansible's periods) too.
  for (const [timeout, grace] of [[60, 60], [600, 90], [604800, 3600], [31536000, 31536000]]) {
    const r = await hc(t, "POST", "/api/v3/checks/", rw, { name: `p${timeout}`, timeout, grace });
    ok(r, 201);
    assert.equal(r.body.timeout, timeout);
    assert.equal(r.body.grace, grace);
  }
  const list = (await t.req("GET", "/api/me/services", { token })).body.items;
  const ten = list.find((s: { name: string }) => s.name === "p600");
  // The native item stays valid against docs/api.md "Resources, times and text": interval one of its values, the exact period
  // and grace beside it.
  assert.equal(ten.interval, 5);
  assert.equal(ten.period_seconds, 600);
  assert.equal(ten.grace_seconds, 90);
  assert.equal(list.find((s: { name: string }) => s.name === "p604800").interval, 1440);
  assert.equal(list.find((s: { name: string }) => s.name === "p60").interval, 5);

  // Judged on the exact period: up until 600 s after the ping, grace until 690 s, then down.
  const uuid = ten.uuid;
  ok(await t.req("GET", `/ping/${uuid}`));
  const status = async () => (await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).body.status;
  t.clock.advance(599_000);
  assert.equal(await status(), "up");
  t.clock.advance(2_000);
  assert.equal(await status(), "grace");
  t.clock.advance(90_000);
  assert.equal(await status(), "down");
  // Off on the pages and our API once the runner's look (due at that millisecond) found it so.
  await runJobs(t.deps, MINUTELY);
  const item = (await t.req("GET", "/api/me/services", { token })).body.items
    .find((s: { uuid: string }) => s.uuid === uuid);
  assert.equal(item.state, "off");

  // test_update_check.py: a timeout changes alone; a grace changes alone.
  const up = await hc(t, "POST", `/api/v3/checks/${uuid}`, rw, { timeout: 3600 });
  ok(up);
  assert.equal(up.body.timeout, 3600);
  assert.equal(up.body.grace, 90);
  const g = await hc(t, "POST", `/api/v3/checks/${uuid}`, rw, { grace: 8 * 86400 });
  ok(g);
  assert.equal(g.body.grace, 691200, "a grace over 7 days is taken");
  assert.equal(g.body.timeout, 3600);
  const native = (await t.req("GET", "/api/me/services", { token })).body.items
    .find((s: { uuid: string }) => s.uuid === uuid);
  assert.equal(native.interval, 60);
  assert.equal(native.period_seconds, 3600);

  // Out of range: Healthchecks' words.
  for (
    const [body, error] of [
      [{ timeout: 59 }, "json validation error: timeout is too small"],
      [{ timeout: 31536001 }, "json validation error: timeout is too large"],
      [{ grace: 59 }, "json validation error: grace is too small"],
      [{ grace: 31536001 }, "json validation error: grace is too large"],
    ] as const
  ) {
    const r = await hc(t, "POST", "/api/v3/checks/", rw, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, { error }, JSON.stringify(body));
  }
});

Deno.test("periods: the native API's interval keeps meaning exactly that; period_seconds and grace_seconds add the exact ones", async () => {
  await using t = await testApp();
  const { token } = await rwKey(t, "n@example.org");
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly", check: "webhook:", period_seconds: 7 * 86400, grace_seconds: 120 },
  });
  ok(made);
  assert.equal(made.body.item.interval, 1440);
  assert.equal(made.body.item.period_seconds, 604800);
  assert.equal(made.body.item.grace_seconds, 120);
  const id = made.body.item.id;
  // An interval of the list alone: exactly that again, one interval's grace unless set.
  const back = await t.req("PATCH", `/api/me/services/${id}`, { token, body: { interval: 15 } });
  ok(back);
  assert.equal(back.body.item.interval, 15);
  assert.equal(back.body.item.period_seconds, 900);
  assert.equal(back.body.item.grace_seconds, 120);
  const plain = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Plain", check: "webhook:", interval: 60 },
  });
  assert.equal(plain.body.item.period_seconds, 3600);
  assert.equal(plain.body.item.grace_seconds, 3600, "one interval, as docs/api.md has it");
  // A checked kind has no period of its own; a schedule none beside it.
  const url = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Site", check: "tcp:93.184.216.34:443", period_seconds: 600 },
  });
  assert.equal(url.status, 400);
  assert.equal(url.body.field, "period_seconds");
  const sched = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Cron", check: "webhook:", schedule: "0 3 * * *", period_seconds: 600 },
  });
  assert.equal(sched.status, 400);
  assert.match(sched.body.error, /^period_seconds: a heartbeat on a schedule/);
  const low = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Fast", check: "webhook:", period_seconds: 59 },
  });
  assert.equal(low.status, 400);
  assert.equal(low.body.field, "period_seconds");
});

Deno.test("runs by rid as Healthchecks pairs them: an end closes only its own start; failures and plain successes close any", async () => {
  await using t = await testApp();
  const { rw } = await rwKey(t, "r@example.org");
  const made = await hc(t, "POST", "/api/v3/checks/", rw, { name: "Runs", timeout: 3600 });
  ok(made, 201);
  const uuid = made.body.uuid;
  const ping = (path: string) => t.req("GET", `/ping/${uuid}${path}`);
  const check = async () => (await hc(t, "GET", `/api/v3/checks/${uuid}`, rw)).body;
  const a = "8d4d6e36-7a8f-4b0c-9a77-0b1c2d3e4f50";
  const b = "04603d8b-edf4-4e85-8f61-24bedbcaab59";

  // Run A starts, then run B (the one open start is B's, as there); A ends: B stays open.
  ok(await ping(`/start?rid=${a}`));
  t.clock.advance(MINUTE);
  ok(await ping(`/start?rid=${b.toUpperCase()}`));
  t.clock.advance(MINUTE);
  ok(await ping(`?rid=${a}`));
  assert.equal((await check()).started, true, "another run's end leaves B open");
  t.clock.advance(MINUTE);
  ok(await ping(`?rid=${b}`));
  assert.equal((await check()).started, false, "B's own end closes it");
  assert.equal((await check()).last_duration, 120);

  // test_it_does_not_update_last_ping_on_rid_mismatch: a success of another id keeps it.
  ok(await ping(`/start?rid=${a}`));
  ok(await ping(`?rid=${b}`));
  assert.equal((await check()).started, true);
  // test_it_clears_last_ping_if_rid_is_absent: a success without an id closes it.
  ok(await ping(""));
  assert.equal((await check()).started, false);
  // A success of another id after that leaves it closed.
  ok(await ping(`?rid=${b}`));
  assert.equal((await check()).started, false);
  // test_it_clears_last_ping_on_failure: a failure of any id closes it.
  ok(await ping(`/start?rid=${a}`));
  ok(await ping(`/fail?rid=${b}`));
  assert.equal((await check()).started, false);

  // test_it_calculates_overlapping_durations (test_get_pings.py): each end takes its own start.
  const { rw: rw2 } = await rwKey(t, "r2@example.org");
  const two = await hc(t, "POST", "/api/v3/checks/", rw2, { name: "Overlap" });
  const u2 = two.body.uuid;
  ok(await t.req("GET", `/ping/${u2}/start?rid=${a}`));
  t.clock.advance(MINUTE);
  ok(await t.req("GET", `/ping/${u2}/start?rid=${b}`));
  t.clock.advance(MINUTE);
  ok(await t.req("GET", `/ping/${u2}?rid=${a}`));
  t.clock.advance(MINUTE);
  ok(await t.req("GET", `/ping/${u2}?rid=${b}`));
  const pings = (await hc(t, "GET", `/api/v3/checks/${u2}/pings/`, rw2)).body.pings;
  assert.deepEqual(
    pings.map((p: { type: string; duration?: number }) => [p.type, p.duration]),
    [["success", 120], ["success", 120], ["start", undefined], ["start", undefined]],
  );
  await runJobs(t.deps, MINUTELY);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${u2}`, rw2)).body.status, "up");
});

Deno.test("pings record their method: GET, POST and HEAD as Healthchecks lists them", async () => {
  await using t = await testApp();
  const { token, rw } = await rwKey(t, "m@example.org");
  const made = await hc(t, "POST", "/api/v3/checks/", rw, { name: "Methods" });
  const uuid = made.body.uuid;
  ok(await t.req("GET", `/ping/${uuid}`));
  ok(await t.req("POST", `/ping/${uuid}`, { raw: "hello world" }));
  ok(await t.req("HEAD", `/ping/${uuid}`));
  const native = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Hooked", check: "webhook:" },
  });
  const hook = native.body.hook_url.replace("http://test.local", "");
  ok(await t.req("GET", hook));
  const pings = (await hc(t, "GET", `/api/v3/checks/${uuid}/pings/`, rw)).body.pings;
  assert.deepEqual(pings.map((p: { method: string }) => p.method), ["HEAD", "POST", "GET"]);
  const other = (await hc(t, "GET", `/api/v3/checks/${native.body.item.uuid}/pings/`, rw)).body;
  assert.deepEqual(other.pings.map((p: { method: string }) => p.method), ["GET"]);
});

Deno.test("OnCalendar schedules (test_create_check.py): taken with tz and grace, judged at their times", async () => {
  await using t = await testApp();
  const { token, rw } = await rwKey(t, "o@example.org");
  const r = await hc(t, "POST", "/api/v3/checks/", rw, {
    schedule: "12:34",
    tz: "Europe/Riga",
    grace: 60,
  });
  ok(r, 201);
  assert.equal(r.body.schedule, "12:34");
  assert.equal(r.body.tz, "Europe/Riga");
  assert.equal(r.body.grace, 60);
  assert.ok(!("timeout" in r.body));
  const bad = await hc(t, "POST", "/api/v3/checks/", rw, {
    schedule: "12:34\nsurprise",
    tz: "Europe/Riga",
    grace: 60,
  });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, {
    error: "json validation error: schedule is not a valid cron or OnCalendar expression",
  });
  // Several lines, each its own time; the check is late past the next of them.
  const two = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "Twice",
    schedule: "Mon..Fri 09:00\nSat,Sun 12:00",
    tz: "UTC",
    grace: 300,
  });
  ok(two, 201);
  assert.equal(two.body.schedule, "Mon..Fri 09:00\nSat,Sun 12:00");
  // T0 is Monday 2026-03-02 09:00 UTC: a ping now is due again Tuesday 09:00.
  ok(await t.req("GET", `/ping/${two.body.uuid}`));
  const got = await hc(t, "GET", `/api/v3/checks/${two.body.uuid}`, rw);
  assert.equal(got.body.next_ping, "2026-03-03T09:00:00+00:00");
  t.clock.advance(24 * 3600_000 + 60_000);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${two.body.uuid}`, rw)).body.status, "grace");
  t.clock.advance(5 * 60_000);
  assert.equal((await hc(t, "GET", `/api/v3/checks/${two.body.uuid}`, rw)).body.status, "down");
  // The native API takes the same schedule and shows it.
  const native = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Timer", check: "webhook:", schedule: "Sun *-*-* 02:00", tz: "Europe/Berlin" },
  });
  ok(native);
  assert.equal(native.body.item.schedule, "Sun *-*-* 02:00");
});

Deno.test("project badges (test_get_badges.py): * and every tag, six addresses each, each answering its format", async () => {
  await using t = await testApp();
  const { rw, token } = await rwKey(t, "b@example.org");
  const ro = (await t.req("POST", "/api/me/api-keys", {
    token,
    body: { name: "ro", readonly: true },
  })).body.key;
  const a = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "A",
    tags: "foo bar",
    timeout: 3600,
    grace: 900,
  });
  const b = await hc(t, "POST", "/api/v3/checks/", rw, {
    name: "B",
    tags: "foo",
    timeout: 3600,
    grace: 900,
  });
  const r = await hc(t, "GET", "/api/v1/badges/", rw);
  ok(r);
  assert.equal(r.headers.get("access-control-allow-origin"), "*");
  assert.deepEqual(Object.keys(r.body.badges).sort(), ["*", "bar", "foo"]);
  assert.deepEqual(Object.keys(r.body.badges.foo).sort(), [
    "json",
    "json3",
    "shields",
    "shields3",
    "svg",
    "svg3",
  ]);
  ok(await hc(t, "GET", "/api/v3/badges/", ro), 200);
  assert.equal(
    (await t.req("POST", "/api/v3/badges/", { headers: { "X-Api-Key": rw } })).status,
    405,
  );
  const none = await t.req("GET", "/api/v3/badges/");
  assert.equal(none.status, 401);
  assert.deepEqual(none.body, { error: "missing api key" });
  // The addresses stay the same from one listing to the next.
  assert.deepEqual((await hc(t, "GET", "/api/v3/badges/", rw)).body, r.body);

  const get = async (url: string) => await t.req("GET", url.replace("http://test.local", ""));
  const foo = r.body.badges.foo;
  // Both new: up (Healthchecks counts only down and late).
  assert.deepEqual((await get(foo.json)).body, { status: "up", total: 2, grace: 0, down: 0 });
  ok(await t.req("GET", `/ping/${a.body.uuid}`));
  ok(await t.req("GET", `/ping/${b.body.uuid}`));
  t.clock.advance(3600_000 + 60_000);
  // Both late: the two-state badge is up, the three-state one late.
  assert.deepEqual((await get(foo.json)).body, { status: "up", total: 2, grace: 2, down: 0 });
  assert.deepEqual((await get(foo.json3)).body, { status: "late", total: 2, grace: 2, down: 0 });
  assert.deepEqual((await get(foo.shields3)).body, {
    schemaVersion: 1,
    label: "foo",
    message: "late",
    color: "important",
  });
  ok(await t.req("GET", `/ping/${a.body.uuid}/fail`));
  assert.deepEqual((await get(foo.json3)).body, { status: "down", total: 2, grace: 1, down: 1 });
  assert.deepEqual((await get(r.body.badges.bar.json)).body, {
    status: "down",
    total: 1,
    grace: 0,
    down: 1,
  });
  const svg = await get(r.body.badges["*"].svg);
  ok(svg);
  assert.match(svg.headers.get("content-type")!, /^image\/svg\+xml/);
  assert.match(svg.text, /down/);
  // A signature of another tag, or a changed one, is no badge.
  const forged = foo.json.replace("/foo.json", "/bar.json");
  assert.equal((await get(forged)).status, 404);
  assert.equal((await get(foo.json.replace(".json", ".png"))).status, 404);
});

Deno.test("channels list (test_list_channels.py): each kind named as Healthchecks names its integration", async () => {
  const { HC_CHANNEL_KINDS } = await import("../kv/service/hc_checks.ts");
  const { KIND_NAMES } = await import("../lib/channels/mod.ts");
  assert.deepEqual(
    Object.keys(HC_CHANNEL_KINDS).sort(),
    [...KIND_NAMES].sort(),
    "every kind named",
  );
  await using t = await testApp({ resolver: fakeResolver({ "ntfy.sh": ["93.184.216.34"] }) });
  const { token, rw } = await rwKey(t, "c@example.org");
  const made = await t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Pager", kind: "pagerduty", routing_key: "R".repeat(32) },
  });
  assert.ok(made.status === 200 || made.status === 201, made.text);
  const hook = await t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Push", kind: "ntfy", url: "https://ntfy.sh/backup-alerts-x1" },
  });
  assert.ok(hook.status === 200 || hook.status === 201, hook.text);
  const list = (await hc(t, "GET", "/api/v3/channels/", rw)).body.channels;
  assert.deepEqual(list.map((c: { name: string; kind: string }) => [c.name, c.kind]), [
    ["Pager", "pd"],
    ["Push", "ntfy"],
  ]);
});
