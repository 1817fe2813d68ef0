import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { DAY, MINUTE } from "../lib/clock.ts";
import { dumpKv, fakeResolver, type TestApp, testApp } from "./_helpers.ts";

/**
 * Heartbeat runs judged like checks (issue 24, part 6), with the fake clock and the runner's
 * minutely looks: `threshold` failed or missing runs in a row before one off alert, a run
 * shorter than `min_duration` is a failed run, and a paused heartbeat stays quiet until it
 * is resumed afresh. Bad input answers 400 naming the field and stores nothing.
 */

const OPS = "ops@example.org";

async function heartbeat(t: TestApp, token: string, body: Record<string, unknown> = {}) {
  const r = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Backup", check: "webhook:", interval: 5, ...body },
  });
  assert.equal(r.status, 200, r.text);
  return {
    id: r.body.item.id as number,
    path: new URL(r.body.hook_url).pathname,
    item: r.body.item,
  };
}

const item = async (t: TestApp, token: string, id: number) =>
  (await t.req("GET", "/api/me/services", { token })).body.items.find((x: { id: number }) =>
    x.id === id
  );

const mails = (t: TestApp) => t.mail.sent.filter((m) => m.to === OPS).map((m) => m.subject);

/** Moves the clock a minute at a time for `minutes`, running the minutely job each time. */
async function minutes(t: TestApp, n: number) {
  for (let i = 0; i < n; i++) {
    t.clock.advance(MINUTE);
    await runDueChecks(t.deps);
  }
}

Deno.test("heartbeat runs: 3 missing runs in a row alert once; the page and API count them", async () => {
  await using t = await testApp();
  const { token } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token, { threshold: 3 });
  assert.equal(hb.item.threshold, 3);
  assert.equal(hb.item.failed_checks, 0);
  await t.req("GET", hb.path);
  const beat = t.clock.now();
  await runDueChecks(t.deps);

  // Interval 5: late past 5 minutes; the first missing run counts past 10 (twice the
  // interval, as with a threshold of 1), the next at 15, the third at 20: off, one alert.
  await minutes(t, 6);
  let s = await item(t, token, hb.id);
  assert.equal(s.state, "warn", "late");
  assert.equal(s.failed_checks, 0);
  await minutes(t, 5);
  s = await item(t, token, hb.id);
  assert.equal(s.state, "warn", "one missing run is below the threshold");
  assert.equal(s.failed_checks, 1);
  assert.match(s.status, /\(failed or missing run 1 of 3 before an alert\)$/);
  await minutes(t, 5);
  s = await item(t, token, hb.id);
  assert.equal(s.failed_checks, 2);
  assert.equal(s.state, "warn");
  assert.deepEqual(mails(t), [], "nobody alerted below the threshold");
  const page = await t.req("GET", `/me/services/${hb.id}`, {
    headers: { cookie: `session=${token}` },
  });
  assert.match(page.text, /Alerts after 3 failed or missing runs\s+in a row; in a row now: 2\./);

  // The third missing run counts 20 minutes after the beat: the runner's look in the minute
  // after mails the one alert.
  while (t.clock.now() <= beat + 20 * MINUTE) await minutes(t, 1);
  await minutes(t, 1);
  s = await item(t, token, hb.id);
  assert.equal(s.state, "off");
  assert.equal(s.failed_checks, 3);
  assert.match(s.status, /\(3 failed or missing runs in a row\)$/);
  assert.deepEqual(mails(t), ['Watched service "Backup" is off']);
  assert.match(t.mail.last(OPS)!.text, /3 failed or missing runs in a row/);
  await minutes(t, 30);
  assert.equal(mails(t).length, 1, "no repeat while it stays off");
  assert.ok((await item(t, token, hb.id)).failed_checks > 3, "the count goes on");

  // A success: back, once, and the count starts over.
  await t.req("GET", hb.path);
  await minutes(t, 1);
  assert.deepEqual(mails(t), [
    'Watched service "Backup" is off',
    'Watched service "Backup" is back',
  ]);
  s = await item(t, token, hb.id);
  assert.equal(s.state, "ok");
  assert.equal(s.failed_checks, 0);
  const h = await t.req("GET", `/api/me/services/${hb.id}/history`, { token });
  const off = h.body.changes.find((c: { state: string }) => c.state === "off");
  assert.equal(Date.parse(off.at), beat + 20 * MINUTE + 1, "off when the third run was missed");
});

Deno.test("heartbeat runs: failures and missing runs add up; a failure below the threshold alerts nobody", async () => {
  await using t = await testApp();
  const { token } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token, { threshold: 2 });
  await t.req("GET", hb.path);
  await runDueChecks(t.deps);

  // One failure, then a success before the runner looked: below the threshold, no off and
  // back pair (with a threshold of 1 that would alert both).
  t.clock.advance(MINUTE);
  await t.req("GET", `${hb.path}/fail`);
  let s = await item(t, token, hb.id);
  assert.equal(s.state, "warn", "a failure below the threshold reads warn");
  assert.equal(s.failed_checks, 1);
  t.clock.advance(1000);
  await t.req("GET", `${hb.path}/0`);
  await runDueChecks(t.deps);
  assert.deepEqual(mails(t), []);

  // A failure the runner counts, then a second one: off and one mail.
  t.clock.advance(MINUTE);
  await t.req("GET", `${hb.path}/1`);
  await runDueChecks(t.deps);
  assert.equal((await item(t, token, hb.id)).failed_checks, 1);
  assert.deepEqual(mails(t), []);
  t.clock.advance(MINUTE);
  await t.req("GET", `${hb.path}/fail`);
  await runDueChecks(t.deps);
  s = await item(t, token, hb.id);
  assert.equal(s.state, "off");
  assert.equal(s.failed_checks, 2);
  assert.deepEqual(mails(t), ['Watched service "Backup" is off']);
  t.clock.advance(1000);
  await t.req("GET", hb.path);
  await minutes(t, 1);
  assert.equal(mails(t).at(-1), 'Watched service "Backup" is back');

  // A missing run, then a failure: two in a row, off.
  const last = t.clock.now();
  while (t.clock.now() <= last + 10 * MINUTE) await minutes(t, 1);
  assert.equal((await item(t, token, hb.id)).failed_checks, 1);
  assert.equal(mails(t).length, 2);
  await t.req("GET", `${hb.path}/fail`);
  await runDueChecks(t.deps);
  s = await item(t, token, hb.id);
  assert.equal(s.failed_checks, 2);
  assert.equal(s.state, "off");
  assert.equal(mails(t).length, 3);
});

Deno.test("heartbeat runs: a run shorter than its minimum is a failed run and alerts", async () => {
  await using t = await testApp();
  const { token } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token, { interval: 60, min_duration: 300 });
  assert.equal(hb.item.min_duration, 300);

  // A run of 10 minutes is fine.
  await t.req("GET", `${hb.path}/start`);
  await runDueChecks(t.deps);
  await minutes(t, 10);
  await t.req("GET", hb.path);
  await minutes(t, 6);
  assert.equal((await item(t, token, hb.id)).state, "ok");

  // The next "succeeds" in 2 seconds: the runner's look at the start's minimum mails it.
  t.clock.advance(30 * MINUTE);
  await t.req("GET", `${hb.path}/start`);
  t.clock.advance(2000);
  await t.req("GET", `${hb.path}?status=backup%20done`);
  // Late until the runner's look at the start's minimum finds it off and alerts.
  const s = await item(t, token, hb.id);
  assert.equal(s.state, "warn", "late until the look");
  assert.equal(s.status, "run took 2 s, less than the 5 minutes it should take");
  assert.equal(s.failed_checks, 1);
  await minutes(t, 6);
  assert.deepEqual(mails(t), ['Watched service "Backup" is off']);
  assert.match(t.mail.last(OPS)!.text, /run took 2 s, less than the 5 minutes it should take/);
  await minutes(t, 5);
  assert.equal(mails(t).length, 1);

  // A success without a start cannot be judged: it counts as good, and the service is back.
  await t.req("GET", hb.path);
  await minutes(t, 1);
  assert.equal(mails(t).at(-1), 'Watched service "Backup" is back');
  assert.equal((await item(t, token, hb.id)).state, "ok");

  // No minimum any more: a short run is fine again.
  const patched = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { min_duration: null },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.item.min_duration, null);
  await t.req("GET", `${hb.path}/start`);
  t.clock.advance(1000);
  await t.req("GET", hb.path);
  await minutes(t, 10);
  assert.equal((await item(t, token, hb.id)).state, "ok");
  assert.equal(mails(t).length, 2);
});

Deno.test("heartbeat runs: a paused heartbeat stays quiet, is shown paused, and resumes afresh", async () => {
  await using t = await testApp();
  const { token, account } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token);
  await t.req("GET", hb.path);
  await runDueChecks(t.deps);
  const badge = await t.req("POST", `/api/me/services/${hb.id}/badge`, { token });
  assert.equal(badge.status, 200, badge.text);
  const put = await t.req("PUT", "/api/me/status-page", {
    token,
    body: { enabled: true, services: [{ id: hb.id }] },
  });
  assert.equal(put.status, 200, put.text);

  const paused = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { paused: true },
  });
  assert.equal(paused.status, 200, paused.text);
  assert.equal(paused.body.item.paused, true);
  assert.equal(paused.body.item.state, "wait");
  assert.match(paused.body.item.status, /^paused since /);

  // Failures, a run that never ends and days without a beat: nobody alerted.
  await t.req("GET", `${hb.path}/fail`);
  await runDueChecks(t.deps);
  await t.req("GET", `${hb.path}/start`);
  for (let i = 0; i < 6; i++) {
    t.clock.advance(DAY / 2);
    await runDueChecks(t.deps);
  }
  assert.deepEqual(mails(t), []);
  const s = await item(t, token, hb.id);
  assert.equal(s.state, "wait");
  assert.equal(s.paused, true);
  assert.equal(s.failed_checks, 0);

  // The list, the page, the status page and the badge say so.
  const cookie = `session=${token}`;
  const list = await t.req("GET", "/me/services", { headers: { cookie } });
  assert.match(list.text, /<span class="tag state state-paused"><svg[^]*?<\/svg>Paused<\/span>/);
  const page = await t.req("GET", `/me/services/${hb.id}`, { headers: { cookie } });
  assert.match(page.text, /Resume heartbeat/);
  const pub = await t.req("GET", `/api/status/${account.slug}`);
  assert.equal(pub.body.services[0].paused, true);
  const svg = await t.req("GET", new URL(badge.body.badge_url).pathname);
  assert.match(svg.text, /paused/);
  // Paused time is left out of uptime (wait counts for neither).
  const h = await t.req("GET", `/api/me/services/${hb.id}/history`, { token });
  assert.equal(h.body.changes.at(-1).state, "wait");

  // Resumed: no alert for the paused days; late again only one period after the resume.
  const resumed = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { paused: false },
  });
  assert.equal(resumed.status, 200, resumed.text);
  assert.equal(resumed.body.item.paused, false);
  assert.equal(resumed.body.item.state, "ok");
  const from = t.clock.now();
  await minutes(t, 5);
  assert.equal((await item(t, token, hb.id)).state, "ok");
  assert.deepEqual(mails(t), []);
  // Still no beat two intervals after the resume: off, and the one alert.
  while (t.clock.now() <= from + 10 * MINUTE) await minutes(t, 1);
  await minutes(t, 1);
  assert.equal((await item(t, token, hb.id)).state, "off");
  assert.deepEqual(mails(t), ['Watched service "Backup" is off']);
  assert.equal((await t.req("GET", `/api/status/${account.slug}`)).body.services[0].paused, false);
});

Deno.test("heartbeat runs: pausing ends an outage's alerts; the page's buttons answer 303", async () => {
  await using t = await testApp();
  const { token } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token);
  await t.req("GET", `${hb.path}/fail`);
  await runDueChecks(t.deps);
  assert.deepEqual(mails(t), ['Watched service "Backup" is off']);
  const cookie = `session=${token}`;
  const post = (path: string) =>
    t.req("POST", path, {
      raw: "",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://localhost",
        cookie,
      },
    });
  const p = await post(`/me/services/${hb.id}/pause`);
  assert.equal(p.status, 303);
  assert.equal(p.headers.get("location"), `/me/services/${hb.id}`);
  assert.equal((await item(t, token, hb.id)).paused, true);
  // Its success while paused sends no back alert: pausing ended the outage's alerts.
  await t.req("GET", hb.path);
  await minutes(t, 3);
  const r = await post(`/me/services/${hb.id}/resume`);
  assert.equal(r.status, 303);
  await minutes(t, 3);
  assert.equal((await item(t, token, hb.id)).state, "ok");
  assert.deepEqual(mails(t), ['Watched service "Backup" is off'], "no back alert");
  // The job fails after the resume: alerted as usual.
  await t.req("GET", `${hb.path}/fail`);
  await runDueChecks(t.deps);
  assert.equal(mails(t).length, 2);
});

Deno.test("heartbeat runs: bad input answers 400 naming the field and stores nothing", async () => {
  await using t = await testApp({ resolver: fakeResolver({ "example.org": ["93.184.216.34"] }) });
  const { token } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token, { interval: 15 });
  const before = await dumpKv(t.kv);
  const cases: [string, string, Record<string, unknown>, string][] = [
    [
      "POST",
      "/api/me/services",
      { name: "Site", check: "webhook:", min_duration: 0 },
      "min_duration",
    ],
    [
      "POST",
      "/api/me/services",
      { name: "Site", check: "webhook:", min_duration: "5" },
      "min_duration",
    ],
    ["POST", "/api/me/services", {
      name: "Site",
      check: "webhook:",
      interval: 5,
      min_duration: 300,
    }, "min_duration"],
    [
      "POST",
      "/api/me/services",
      { name: "Site", check: "tcp:example.org:22", min_duration: 30 },
      "min_duration",
    ],
    ["POST", "/api/me/services", { name: "Site", check: "webhook:", threshold: 6 }, "threshold"],
    ["PATCH", `/api/me/services/${hb.id}`, { paused: "yes" }, "paused"],
    ["PATCH", `/api/me/services/${hb.id}`, { min_duration: 900 }, "min_duration"],
    ["PATCH", `/api/me/services/${hb.id}`, { min_duration: 1.5 }, "min_duration"],
    ["PATCH", `/api/me/services/${hb.id}`, { threshold: 0 }, "threshold"],
  ];
  for (const [method, path, body, field] of cases) {
    const r = await t.req(method, path, { token, body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.body.field, field, JSON.stringify(body));
    assert.match(r.body.error, new RegExp(field));
  }
  // A shorter minimum fits the interval; a schedule's grace bounds it instead.
  const ok = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { min_duration: 600 },
  });
  assert.equal(ok.status, 200, ok.text);
  const tooShortGrace = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { schedule: "0 3 * * *", grace: 5 },
  });
  assert.equal(tooShortGrace.status, 400);
  assert.equal(tooShortGrace.body.field, "min_duration");
  const back = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { min_duration: null },
  });
  assert.equal(back.status, 200);
  assert.equal(await dumpKv(t.kv), before, "nothing stored by the refused ones");

  // A checked kind has no minimum (it may be paused: tests/http_checks_test.ts).
  const site = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Port", check: "tcp:example.org:22" },
  });
  const refused = await t.req("PATCH", `/api/me/services/${site.body.item.id}`, {
    token,
    body: { min_duration: 60 },
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.field, "min_duration");
  assert.equal((await item(t, token, site.body.item.id)).min_duration, null);
});

Deno.test("heartbeat runs: the form takes the minimum with a plain message beside the field", async () => {
  await using t = await testApp();
  const { token } = await t.account(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token, { interval: 15 });
  const cookie = `session=${token}`;
  const form = (fields: Record<string, string>) => ({
    raw: new URLSearchParams(fields).toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: "http://localhost",
      cookie,
    },
  });
  const base = { name: "Backup", group: "Public", interval: "15", threshold: "3", alerts: "on" };
  const bad = await t.req("POST", `/me/services/${hb.id}`, form({ ...base, min_duration: "1200" }));
  assert.equal(bad.status, 400);
  assert.match(bad.text, /<div class="field invalid"><label for="f-min_duration">/);
  assert.match(
    bad.text,
    /id="f-min_duration-error">Must be shorter than the 15 minutes a run may take/,
  );
  assert.equal((await item(t, token, hb.id)).threshold, 1, "nothing stored");
  const good = await t.req("POST", `/me/services/${hb.id}`, form({ ...base, min_duration: "120" }));
  assert.equal(good.status, 303, good.text);
  const s = await item(t, token, hb.id);
  assert.equal(s.min_duration, 120);
  assert.equal(s.threshold, 3);
  const page = await t.req("GET", `/me/services/${hb.id}`, { headers: { cookie } });
  assert.match(page.text, /A run shorter than 2 minutes counts as failed\./);
  // Emptied: no minimum.
  const cleared = await t.req(
    "POST",
    `/me/services/${hb.id}`,
    form({ ...base, min_duration: "", had_min: "1" }),
  );
  assert.equal(cleared.status, 303);
  assert.equal((await item(t, token, hb.id)).min_duration, null);
});

Deno.test("heartbeat runs: export holds the run settings and the pause; erasure removes them", async () => {
  await using t = await testApp();
  const { token } = await t.signIn(OPS, { name: "Ops" });
  const hb = await heartbeat(t, token, { interval: 60, threshold: 4, min_duration: 90 });
  const paused = await t.req("PATCH", `/api/me/services/${hb.id}`, {
    token,
    body: { paused: true },
  });
  assert.equal(paused.status, 200, paused.text);
  const d = (await t.req("GET", "/api/me/export", { token })).body;
  const s = d.services.find((x: { id: number }) => x.id === hb.id);
  assert.equal(s.threshold, 4);
  assert.equal(s.min_duration, 90);
  assert.equal(s.paused, true);
  assert.match(s.status, /^paused since /);
  assert.ok(s.changes.some((c: { state: string; status: string }) => c.status === "paused"));
  assert.ok((await dumpKv(t.kv)).includes('"paused_at"'));

  const erased = await t.req("DELETE", "/api/me", { token });
  assert.equal(erased.status, 200, erased.text);
  const left = await dumpKv(t.kv);
  for (const field of ['"paused_at"', '"min_duration"', '"judged"', '"resumed"']) {
    assert.ok(!left.includes(field), `KV still holds ${field}`);
  }
});
