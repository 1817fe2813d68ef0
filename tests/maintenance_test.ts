import assert from "node:assert/strict";
import { runDueChecks } from "../jobs/checks.ts";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import { dailyFigures } from "../lib/history.ts";
import { runsWithin, zonedTime } from "../lib/maintenance.ts";
import { systemConnector } from "../lib/net.ts";
import { createWindow } from "../kv/service/windows.ts";
import { DomainError } from "../lib/errors.ts";
import { T0, type TestApp, testApp } from "./_helpers.ts";
import { localHttp } from "./_servers.ts";

/**
 * Maintenance windows with the fake clock: a window silences failures (mail, channels,
 * followers), shows "maintenance" on the page, the badge and the status page, marks the
 * history and leaves those hours out of uptime; a failure lasting past the end alerts then.
 */

const OPS = "ops@example.org";
const iso = (t: number) => new Date(t).toISOString();

async function owner(t: TestApp) {
  return await t.account(OPS, { name: "Ada Ops", roles: ["owner"] });
}

Deno.test("maintenance: bad windows are refused with the field named, nothing stored", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const other = await t.account("x@example.org", { name: "Xavier" });
  const theirs = await t.req("POST", "/api/me/services", {
    token: other.token,
    body: { name: "Not yours", check: "webhook:" },
  });
  const cases: [Record<string, unknown>, string][] = [
    [{ name: "Nothing", groups: ["Jobs"] }, "from"],
    [
      { name: "Both", groups: ["Jobs"], from: iso(T0), to: iso(T0 + HOUR), cron: "0 2 * * *" },
      "from",
    ],
    [{ name: "Backwards", groups: ["Jobs"], from: iso(T0), to: iso(T0 - HOUR) }, "to"],
    [{ name: "Too long", groups: ["Jobs"], from: iso(T0), to: iso(T0 + 91 * DAY) }, "to"],
    [{ name: "Bad cron", groups: ["Jobs"], cron: "every day", minutes: 30 }, "cron"],
    [
      { name: "Bad zone", groups: ["Jobs"], cron: "0 2 * * *", tz: "Mars/Olympus", minutes: 30 },
      "tz",
    ],
    [{ name: "No length", groups: ["Jobs"], cron: "0 2 * * *" }, "minutes"],
    [{ name: "Covers none", from: iso(T0), to: iso(T0 + HOUR) }, "services"],
    [
      { name: "Foreign", services: [theirs.body.item.id], from: iso(T0), to: iso(T0 + HOUR) },
      "services",
    ],
    [{ name: "Bad group", groups: ["Nope"], from: iso(T0), to: iso(T0 + HOUR) }, "groups"],
    [{ name: "Bad time", groups: ["Jobs"], from: "tomorrow", to: iso(T0 + HOUR) }, "from"],
  ];
  for (const [body, field] of cases) {
    const r = await t.req("POST", "/api/me/maintenance", { token, body });
    assert.equal(r.status, 400, `${body.name}: ${r.text}`);
    assert.equal(r.body.field, field, `${body.name}: ${r.text}`);
  }
  assert.deepEqual((await t.req("GET", "/api/me/maintenance", { token })).body.items, []);
  assert.equal((await t.req("GET", "/api/me/maintenance")).status, 401);
});

Deno.test("maintenance: a window silences and marks; a failure lasting past its end alerts then", async () => {
  let failing = false;
  const srv = localHttp(() => failing ? new Response("no", { status: 503 }) : new Response("ok"));
  try {
    await using t = await testApp({ connector: systemConnector });
    const { account, token } = await owner(t);
    const site = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Riverside LAN", check: `url:http://127.0.0.1:${srv.port}/`, interval: 5 },
    });
    const id = site.body.item.id;
    await t.req("PUT", "/api/me/status-page", {
      token,
      body: { enabled: true, services: [{ id }] },
    });
    const badge = new URL(
      (await t.req("POST", `/api/me/services/${id}/badge`, { token })).body.badge_url,
    ).pathname;
    // A follower, to prove they hear nothing either.
    await t.req("POST", `/api/status/${account.slug}/follow`, { body: { email: "fan@x.test" } });
    const confirm = t.mail.last("fan@x.test")!.text.match(/confirm\?token=([0-9.A-Za-z_-]+)/)![1];
    await t.req("POST", `/api/status/${account.slug}/confirm`, { body: { token: confirm } });

    // A window from 10:00 to 12:00 covering the group "Public" (the service's).
    const start = T0 + HOUR;
    const w = await t.req("POST", "/api/me/maintenance", {
      token,
      body: {
        name: "Switch swap",
        groups: ["Public"],
        from: iso(start),
        to: iso(start + 2 * HOUR),
      },
    });
    assert.equal(w.status, 201, w.text);
    assert.equal(w.body.item.running_until, null);
    assert.equal(w.body.item.next_start, iso(start));

    // In the window the service fails: no mail, no follower mail; it reads maintenance.
    t.clock.set(start + 10 * MINUTE);
    failing = true;
    const sent = t.mail.sent.length;
    await runDueChecks(t.deps);
    assert.equal((await t.req("GET", `/api/me/services`, { token })).body.items[0].state, "off");
    assert.equal(t.mail.sent.length, sent, "a failure in the window alerts nobody");
    const listed = await t.req("GET", "/api/me/maintenance", { token });
    assert.equal(listed.body.items[0].running_until, iso(start + 2 * HOUR));
    const pub = await t.req("GET", `/api/status/${account.slug}`);
    assert.equal(pub.body.services[0].maintenance, true);
    assert.match((await t.req("GET", badge)).text, /Riverside LAN: maintenance/);
    assert.match((await t.req("GET", `/status/${account.slug}`)).text, /Under maintenance/);
    const page = await t.req("GET", `/me/services/${id}`, {
      headers: { cookie: `session=${token}` },
    });
    assert.match(page.text, /Under maintenance until/);
    t.clock.set(start + 90 * MINUTE);
    await runDueChecks(t.deps);
    assert.equal(t.mail.sent.length, sent, "still nobody");

    // The window ends with the service still off: the runner looks right after, and alerts.
    t.clock.set(start + 2 * HOUR + MINUTE);
    await runDueChecks(t.deps);
    const off = t.mail.sent.slice(sent);
    assert.deepEqual(off.map((m) => m.to).sort(), ["fan@x.test", OPS]);
    assert.match(t.mail.last(OPS)!.subject, /"Riverside LAN" is off/);
    assert.equal(
      (await t.req("GET", `/api/status/${account.slug}`)).body.services[0].maintenance,
      false,
    );
    assert.match((await t.req("GET", badge)).text, /Riverside LAN: down/);
    // Once only.
    t.clock.advance(10 * MINUTE);
    await runDueChecks(t.deps);
    assert.equal(t.mail.sent.length, sent + 2);

    // History: the two window hours are marked and left out of uptime.
    const h = await t.req("GET", `/api/me/services/${id}/history`, { token });
    const today = h.body.days[89];
    assert.equal(today.maintenance_s, 2 * 3600);
    // Known time today: 09:00-10:00 up, 12:00-12:11 down (the window's 2 hours left out).
    assert.equal(today.down_s, 11 * 60);
    assert.ok(Math.abs(today.uptime - 60 / 71) < 1e-9, String(today.uptime));
    assert.equal(
      (await t.req("GET", `/api/status/${account.slug}`)).body.services[0].days[89].maintenance_s,
      7200,
    );

    // A window in which the service fails and comes back: nothing at all, before or after.
    failing = false;
    t.clock.advance(5 * MINUTE);
    await runDueChecks(t.deps); // back: the one recovery mail (and the follower's)
    const quietFrom = t.clock.now();
    await t.req("POST", "/api/me/maintenance", {
      token,
      body: { name: "Reboot", services: [id], from: iso(quietFrom), to: iso(quietFrom + HOUR) },
    });
    const before = t.mail.sent.length;
    failing = true;
    t.clock.advance(5 * MINUTE);
    await runDueChecks(t.deps);
    failing = false;
    t.clock.advance(5 * MINUTE);
    await runDueChecks(t.deps);
    t.clock.set(quietFrom + 2 * HOUR);
    await runDueChecks(t.deps);
    assert.equal(t.mail.sent.length, before, "failed and back within the window: no mail");

    // Deleted: gone; erasure takes the rest with the account (tests/data_rights_test.ts).
    const items = (await t.req("GET", "/api/me/maintenance", { token })).body.items;
    assert.equal(items.length, 2);
    assert.equal(
      (await t.req("DELETE", `/api/me/maintenance/${items[0].id}`, { token })).status,
      200,
    );
    assert.equal(
      (await t.req("DELETE", `/api/me/maintenance/${items[0].id}`, { token })).status,
      404,
    );
    assert.equal((await t.req("GET", "/api/me/maintenance", { token })).body.items.length, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("maintenance: a heartbeat in a scheduled window stays quiet, then alerts if still off", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const hb = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:", interval: 5, group: "Jobs" },
  });
  const path = new URL(hb.body.hook_url).pathname;
  // Every day at 10:30 Berlin (09:30 UTC in March), 60 minutes.
  const w = await t.req("POST", "/api/me/maintenance", {
    token,
    body: {
      name: "Backup window",
      groups: ["Jobs"],
      cron: "30 10 * * *",
      tz: "Europe/Berlin",
      minutes: 60,
    },
  });
  assert.equal(w.status, 201, w.text);
  assert.equal(w.body.item.next_start, "2026-03-02T09:30:00.000Z");
  await t.req("GET", path);
  t.clock.advance(5 * MINUTE);
  await runDueChecks(t.deps); // the runner has seen it ok
  t.clock.set(Date.parse("2026-03-02T09:40:00Z"));
  assert.equal((await t.req("GET", `${path}/fail`)).status, 200);
  await runDueChecks(t.deps);
  assert.equal(t.mail.sent.length, 0, "a failure signalled in the window alerts nobody");
  t.clock.set(Date.parse("2026-03-02T10:31:00Z"));
  await runDueChecks(t.deps);
  assert.match(t.mail.last(OPS)!.subject, /"Nightly backup" is off/);
  assert.equal(t.mail.sent.length, 1);
});

Deno.test("maintenance: pure parts: zoned times, runs of a schedule, uptime without the window", () => {
  assert.equal(zonedTime("2026-03-02T10:30", "Europe/Berlin"), Date.parse("2026-03-02T09:30:00Z"));
  assert.equal(zonedTime("2026-07-02T10:30", "Europe/Berlin"), Date.parse("2026-07-02T08:30:00Z"));
  assert.equal(zonedTime("2026-03-02T10:30", "UTC"), Date.parse("2026-03-02T10:30:00Z"));
  assert.equal(zonedTime("2026-02-30T10:30", "UTC"), null);
  assert.equal(zonedTime("yesterday", "UTC"), null);
  const daily = { from: null, to: null, cron: "0 2 * * *", tz: "UTC", minutes: 90 };
  const day0 = Date.parse("2026-03-01T00:00:00Z");
  assert.deepEqual(runsWithin(daily, day0 + 2.5 * HOUR, day0 + 2 * DAY), [
    [day0 + 2.5 * HOUR, day0 + 3.5 * HOUR],
    [day0 + DAY + 2 * HOUR, day0 + DAY + 3.5 * HOUR],
  ]);
  // A day off for 6 hours, 4 of them in maintenance: 2 h down of 20 h counted.
  const figures = dailyFigures({
    now: day0 + DAY - 1,
    days: 1,
    changes: [{ at: day0 + 6 * HOUR, state: "off" }, { at: day0 + 12 * HOUR, state: "ok" }],
    before: "ok",
    quiet: [[day0 + 6 * HOUR, day0 + 10 * HOUR]],
  });
  assert.equal(figures[0].down_s, 2 * 3600);
  assert.equal(figures[0].maintenance_s, 4 * 3600);
  assert.ok(Math.abs(figures[0].uptime! - 18 / 20) < 1e-6);
});

const form = (fields: Record<string, string>, cookie: string) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    origin: "http://localhost",
    cookie,
  },
});

Deno.test("maintenance pages: add once in a time zone and on a schedule, errors by the field, delete", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const cookie = `session=${token}`;
  const hb = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:" },
  });
  const id = hb.body.item.id;
  const empty = await t.req("GET", "/me/maintenance", { headers: { cookie } });
  assert.equal(empty.status, 200);
  assert.match(empty.text, /No maintenance windows\./);

  // Nothing covered, a schedule without a length, a time that is none, an unknown zone: each
  // said beside its field, in words.
  const refused: [Record<string, string>, RegExp[]][] = [
    [
      { name: "Swap", kind: "once", tz: "UTC", from: "2026-03-02T10:00", to: "2026-03-02T11:00" },
      [/id="f-services-error"/],
    ],
    [
      { name: "Weekly", kind: "schedule", [`s-${id}`]: "on", cron: "0 2 * * 0", tz: "UTC" },
      [/id="f-minutes-error"/],
    ],
    [
      { name: "Swap", kind: "once", [`s-${id}`]: "on", tz: "UTC", from: "soon", to: "later" },
      [/id="f-from-error"/, /must be a date and time/i],
    ],
    [
      {
        name: "Swap",
        kind: "once",
        [`s-${id}`]: "on",
        tz: "Nowhere/Atlantis",
        from: "2026-03-02T10:00",
        to: "2026-03-02T11:00",
      },
      [/must be a known time zone/i],
    ],
  ];
  // Everything wrong at once: every message beside its field in one answer.
  const all = await t.req(
    "POST",
    "/me/maintenance",
    form(
      { name: "Weekly", kind: "schedule", cron: "61 2 * * 0", tz: "Mars/Olympus", minutes: "0" },
      cookie,
    ),
  );
  assert.equal(all.status, 400);
  for (const field of ["services", "cron", "tz", "minutes"]) {
    assert.match(all.text, new RegExp(`id="f-${field}-error"`), field);
  }
  for (const [fields, said] of refused) {
    const bad = await t.req("POST", "/me/maintenance", form(fields, cookie));
    assert.equal(bad.status, 400);
    for (const words of said) assert.match(bad.text, words);
  }

  // Once, in Berlin's time: stored in UTC.
  const once = await t.req(
    "POST",
    "/me/maintenance",
    form({
      name: "Switch swap",
      kind: "once",
      [`s-${id}`]: "on",
      tz: "Europe/Berlin",
      from: "2026-03-02T11:00",
      to: "2026-03-02T12:30",
    }, cookie),
  );
  assert.equal(once.status, 303, once.text);
  const sched = await t.req(
    "POST",
    "/me/maintenance",
    form({
      name: "Sunday backups",
      kind: "schedule",
      group: "Public",
      cron: "0 2 * * 0",
      tz: "UTC",
      minutes: "120",
    }, cookie),
  );
  assert.equal(sched.status, 303, sched.text);
  const items = (await t.req("GET", "/api/me/maintenance", { token })).body.items;
  assert.equal(items[0].from, "2026-03-02T10:00:00.000Z");
  assert.equal(items[0].to, "2026-03-02T11:30:00.000Z");
  assert.deepEqual(items[1].groups, ["Public"]);
  assert.equal(items[1].minutes, 120);

  t.clock.set(Date.parse("2026-03-02T10:15:00Z"));
  const page = await t.req("GET", "/me/maintenance", { headers: { cookie } });
  assert.match(page.text, /Running now, until/);
  assert.match(page.text, /Next start:/);
  const del = page.text.match(/\/me\/maintenance\/(\d+)\/delete/)![1];
  assert.equal(
    (await t.req("POST", `/me/maintenance/${del}/delete`, form({}, cookie))).status,
    303,
  );
  assert.equal((await t.req("GET", "/api/me/maintenance", { token })).body.items.length, 1);
});

Deno.test("maintenance: the owner's service item and pages say maintenance while a window runs", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const cookie = `session=${token}`;
  const add = async (name: string) =>
    (await t.req("POST", "/api/me/services", { token, body: { name, check: "webhook:" } }))
      .body.item;
  const a = await add("Nightly backup");
  const b = await add("Weekly report");
  assert.equal(a.maintenance, false);
  const start = T0 + HOUR;
  const w = await t.req("POST", "/api/me/maintenance", {
    token,
    body: { name: "Disk swap", services: [a.id], from: iso(start), to: iso(start + HOUR) },
  });
  assert.equal(w.status, 201, w.text);
  const marks = async () =>
    (await t.req("GET", "/api/me/services", { token })).body.items
      .map((s: { maintenance: boolean; state: string }) => [s.maintenance, s.state]);
  assert.deepEqual(await marks(), [[false, "wait"], [false, "wait"]]);

  // While it runs: the item says so, its state keeps what the checks say (the enum of docs/api.md
  // "Watched services").
  t.clock.set(start + 10 * MINUTE);
  assert.deepEqual(await marks(), [[true, "wait"], [false, "wait"]]);
  const patched = await t.req("PATCH", `/api/me/services/${a.id}`, {
    token,
    body: { alerts: false },
  });
  assert.equal(patched.body.item.maintenance, true);
  assert.equal(
    (await t.req("PATCH", `/api/me/services/${b.id}`, { token, body: { alerts: false } }))
      .body.item.maintenance,
    false,
  );
  const list = await t.req("GET", "/me/services", { headers: { cookie } });
  assert.equal(
    list.text.match(/class="tag state state-maintenance"><svg[^]*?<\/svg>Maintenance</g)?.length,
    1,
  );
  const row = list.text.match(new RegExp(`<tr>(?:(?!</tr>).)*?/me/services/${a.id}"[^]*?</tr>`))!;
  assert.match(row[0], /state-maintenance/);
  const page = await t.req("GET", `/me/services/${a.id}`, { headers: { cookie } });
  assert.match(
    page.text,
    /<dt>State<\/dt><dd><span class="tag state state-maintenance"><svg[^]*?<\/svg>Maintenance/,
  );
  const other = await t.req("GET", `/me/services/${b.id}`, { headers: { cookie } });
  assert.match(other.text, /<dt>State<\/dt><dd><span class="tag state state-wait">/);

  // The OpenAPI document describes the field.
  const doc = (await t.req("GET", "/api/openapi.json")).body;
  assert.equal(doc.components.schemas.Service.properties.maintenance.type, "boolean");
  assert.ok(doc.components.schemas.Service.required.includes("maintenance"));

  // After the window: no longer.
  t.clock.set(start + 2 * HOUR);
  assert.deepEqual(await marks(), [[false, "wait"], [false, "wait"]]);
});

Deno.test("maintenance: a deleted service leaves the windows; a window left covering nothing goes", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const add = async (name: string) =>
    (await t.req("POST", "/api/me/services", { token, body: { name, check: "webhook:" } }))
      .body.item.id;
  const a = await add("Nightly backup");
  const b = await add("Weekly report");
  const window = (name: string, body: Record<string, unknown>) =>
    t.req("POST", "/api/me/maintenance", {
      token,
      body: { name, from: iso(T0 + HOUR), to: iso(T0 + 2 * HOUR), ...body },
    });
  assert.equal((await window("Both", { services: [a, b] })).status, 201);
  assert.equal((await window("Only a", { services: [a] })).status, 201);
  assert.equal((await window("A and jobs", { services: [a], groups: ["Jobs"] })).status, 201);
  assert.equal((await t.req("DELETE", `/api/me/services/${a}`, { token })).status, 200);
  const items = (await t.req("GET", "/api/me/maintenance", { token })).body.items;
  assert.deepEqual(
    items.map((w: { name: string; services: number[]; groups: string[] }) => [
      w.name,
      w.services,
      w.groups,
    ]),
    [["Both", [b], []], ["A and jobs", [], ["Jobs"]]],
  );
});

Deno.test("maintenance form: plain messages beside the end, the schedule, the kind and the group", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const cookie = `session=${token}`;
  const id = (await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:" },
  })).body.item.id;
  const once = { name: "Swap", kind: "once", [`s-${id}`]: "on", tz: "UTC" };
  const cases: [Record<string, string>, string, RegExp][] = [
    [
      { ...once, from: "2026-03-02T11:00", to: "2026-03-02T10:00" },
      "to",
      /^The end must be after the start\.$/,
    ],
    [
      { ...once, kind: "schedule", cron: "61 * * * *", minutes: "30" },
      "cron",
      /^A field cannot be read \(minute 0-59.*for example 0 2 \* \* 0 is 02:00 every Sunday\.$/,
    ],
    [
      { ...once, kind: "schedule", cron: "0 2 * *", minutes: "30" },
      "cron",
      /^Write five fields: minute, hour, day, month and weekday; for example 0 2/,
    ],
    [
      { ...once, kind: "weekly", from: "2026-03-02T10:00", to: "2026-03-02T11:00" },
      "kind",
      /^Choose Once or On a schedule\.$/,
    ],
    [
      {
        name: "Swap",
        kind: "once",
        group: "Nope",
        from: "2026-03-02T10:00",
        to: "2026-03-02T11:00",
      },
      "group",
      /^No group "Nope"\.$/,
    ],
  ];
  for (const [fields, field, words] of cases) {
    const bad = await t.req("POST", "/me/maintenance", form(fields, cookie));
    assert.equal(bad.status, 400, fields.name);
    const beside = bad.text.match(new RegExp(`<p class="error" id="f-${field}-error">([^<]*)</p>`));
    assert.ok(beside, `${field}: ${bad.text.match(/<div class="errors"[^]*?<\/div>/)?.[0]}`);
    assert.match(beside[1].replaceAll("&quot;", '"'), words);
  }
  assert.deepEqual((await t.req("GET", "/api/me/maintenance", { token })).body.items, []);

  // The API names the field and says it in the same words.
  const api = await t.req("POST", "/api/me/maintenance", {
    token,
    body: { name: "Swap", services: [id], cron: "61 * * * *", minutes: 30 },
  });
  assert.equal(api.status, 400);
  assert.equal(api.body.field, "cron");
  assert.match(api.body.error, /^cron: a field cannot be read \(minute 0-59/);
  assert.doesNotMatch(api.body.error, /Invalid value|CronPattern/);
  const backwards = await t.req("POST", "/api/me/maintenance", {
    token,
    body: { name: "Swap", services: [id], from: iso(T0 + HOUR), to: iso(T0) },
  });
  assert.equal(backwards.body.error, "to: the end must be after the start");
});

Deno.test("maintenance: a service removed while its window is being made is refused, not kept", async () => {
  await using t = await testApp();
  const { token, account: { id: account } } = await t.account("ops@example.org", { name: "Ops" });
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Backup", check: "webhook:", interval: 5 },
  });
  assert.equal(made.status, 200, made.text);
  const service = made.body.item.id as number;
  // The service goes right after the window's first read of it (a delete from another tab).
  let removed = false;
  const kv = new Proxy(t.kv, {
    get(target, prop) {
      if (prop !== "getMany") return Reflect.get(target, prop, target);
      return async (keys: Deno.KvKey[]) => {
        const got = await target.getMany(keys);
        if (!removed && keys.some((k) => k[0] === "services_by_id")) {
          removed = true;
          const del = await t.req("DELETE", `/api/me/services/${service}`, { token });
          assert.equal(del.status, 200, del.text);
        }
        return got;
      };
    },
  });
  await assert.rejects(
    createWindow({ ...t.deps, kv }, account, {
      name: "Night",
      services: [service],
      groups: [],
      places: [],
      from: T0 + HOUR,
      to: T0 + 2 * HOUR,
    }),
    (err: DomainError) => err.kind === "invalid" && err.extra.field === "services",
  );
  assert.ok(removed);
  assert.deepEqual((await t.req("GET", "/api/me/maintenance", { token })).body.items, []);
});

Deno.test("maintenance: End now ends a scheduled window's run, keeps its schedule, and judges at once", async () => {
  await using t = await testApp();
  const { token } = await owner(t);
  const cookie = `session=${token}`;
  const hb = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:", interval: 1440, group: "Jobs" },
  });
  const path = new URL(hb.body.hook_url).pathname;
  // Every day at 09:30 UTC, 2 hours.
  const w = await t.req("POST", "/api/me/maintenance", {
    token,
    body: { name: "Backup window", groups: ["Jobs"], cron: "30 9 * * *", tz: "UTC", minutes: 120 },
  });
  assert.equal(w.status, 201, w.text);
  const id = w.body.item.id;
  await t.req("GET", path);
  t.clock.advance(5 * MINUTE);
  await runDueChecks(t.deps);
  // A failure in the run: nobody is told while it runs.
  t.clock.set(Date.parse("2026-03-02T09:40:00Z"));
  assert.equal((await t.req("GET", `${path}/fail`)).status, 200);
  await runDueChecks(t.deps);
  assert.equal(t.mail.sent.length, 0);
  const before = await t.req("GET", "/me/maintenance", { headers: { cookie } });
  assert.match(before.text, />End this run now</);

  // Ended at 10:00: the run is over, the next one is tomorrow's, and the heartbeat still off
  // alerts at once, not at 11:30.
  t.clock.set(Date.parse("2026-03-02T10:00:00Z"));
  const ended = await t.req("POST", `/me/maintenance/${id}/end`, form({}, cookie));
  assert.equal(ended.status, 303);
  const [item] = (await t.req("GET", "/api/me/maintenance", { token })).body.items;
  assert.equal(item.running_until, null);
  assert.equal(item.cron, "30 9 * * *");
  assert.equal(item.next_start, "2026-03-03T09:30:00.000Z");
  assert.equal(
    (await t.req("GET", "/api/me/services", { token })).body.items[0].maintenance,
    false,
  );
  await runDueChecks(t.deps);
  assert.match(t.mail.last(OPS)!.subject, /"Nightly backup" is off/);
  assert.equal(t.mail.sent.length, 1);
  // Ending it again between runs does nothing.
  await t.req("POST", `/me/maintenance/${id}/end`, form({}, cookie));
  assert.equal(
    (await t.req("GET", "/api/me/maintenance", { token })).body.items[0].next_start,
    item.next_start,
  );

  // Tomorrow's run is whole; the history keeps today's run from 09:30 to 10:00 only.
  t.clock.set(Date.parse("2026-03-03T10:00:00Z"));
  const next = (await t.req("GET", "/api/me/maintenance", { token })).body.items[0];
  assert.equal(next.running_until, "2026-03-03T11:30:00.000Z");
  const h = await t.req("GET", `/api/me/services/${hb.body.item.id}/history`, { token });
  assert.equal(h.body.days[88].maintenance_s, 30 * 60);
});

Deno.test("maintenance: a window once ended early brings a checked service's next check forward", async () => {
  let failing = true;
  const srv = localHttp(() => failing ? new Response("no", { status: 503 }) : new Response("ok"));
  try {
    await using t = await testApp({ connector: systemConnector });
    const { token } = await owner(t);
    const cookie = `session=${token}`;
    const site = await t.req("POST", "/api/me/services", {
      token,
      body: { name: "Riverside LAN", check: `url:http://127.0.0.1:${srv.port}/`, interval: 60 },
    });
    const w = await t.req("POST", "/api/me/maintenance", {
      token,
      body: {
        name: "Switch swap",
        services: [site.body.item.id],
        from: iso(T0),
        to: iso(T0 + 4 * HOUR),
      },
    });
    t.clock.advance(MINUTE);
    await runDueChecks(t.deps);
    assert.equal(t.mail.sent.length, 0, "off in the window: nobody told");
    // Its next check was an hour away; ended now, it is checked (and alerts) at once.
    t.clock.advance(10 * MINUTE);
    await t.req("POST", `/me/maintenance/${w.body.item.id}/end`, form({}, cookie));
    await runDueChecks(t.deps);
    assert.match(t.mail.last(OPS)!.subject, /"Riverside LAN" is off/);
    failing = false;
  } finally {
    await srv.close();
  }
});
