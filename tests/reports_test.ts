/**
 * Uptime reports (issue 47, item 3), in process: the figures' rules as a table (lib/report.ts),
 * the ranges refused in plain words, the API's JSON and CSV, the page, and the monthly mail
 * (kv/status/reports.ts).
 */
import assert from "node:assert/strict";
import { atomic, commit } from "../kv/_atomic.ts";
import { recordChange } from "../kv/service/history.ts";
import { mailMonthlyReports, setReportMail } from "../kv/status/reports.ts";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import {
  dayAt,
  durationText,
  monthRange,
  offSpans,
  previousMonth,
  serviceFigures,
  uptimeText,
} from "../lib/report.ts";
import { testApp } from "./_helpers.ts";

const D = Date.UTC(2026, 1, 1); // 2026-02-01

Deno.test("report figures: every moment counted once, by the rule stated", () => {
  const changes = [
    { at: D, state: "ok" as const },
    { at: D + 10 * HOUR, state: "off" as const },
    { at: D + 12 * HOUR, state: "ok" as const },
    { at: D + 20 * HOUR, state: "off" as const },
    { at: D + 21 * HOUR, state: "ok" as const },
  ];
  const cases: {
    name: string;
    quiet?: [number, number][];
    gaps?: [number, number][];
    parentOff?: [number, number][];
    want: Partial<ReturnType<typeof serviceFigures>>;
  }[] = [
    {
      name: "plain: 3 hours down of 24",
      want: { up_s: 21 * 3600, down_s: 3 * 3600, uptime: 21 / 24, longest_outage_s: 2 * 3600 },
    },
    {
      name: "maintenance over the first outage: left out",
      quiet: [[D + 9 * HOUR, D + 13 * HOUR]],
      want: { down_s: 3600, maintenance_s: 4 * 3600, uptime: 19 / 20, longest_outage_s: 3600 },
    },
    {
      name: "a parent down during the second outage: unreachable, apart",
      parentOff: [[D + 19 * HOUR, D + 22 * HOUR]],
      want: { down_s: 2 * 3600, unreachable_s: 3600, up_s: 21 * 3600, uptime: 21 / 23 },
    },
    {
      name: "the monitor down for two hours: no data",
      gaps: [[D + 11 * HOUR, D + 13 * HOUR]],
      want: { down_s: 2 * 3600, monitor_down_s: 2 * 3600, up_s: 20 * 3600 },
    },
  ];
  for (const c of cases) {
    const got = serviceFigures({
      from: D,
      to: D + DAY,
      changes,
      before: null,
      quiet: c.quiet,
      gaps: c.gaps,
      parentOff: c.parentOff,
    });
    for (const [k, v] of Object.entries(c.want)) {
      assert.deepEqual(got[k as keyof typeof got], v, `${c.name}: ${k}`);
    }
  }
  // Outages and what explains them.
  const explained = serviceFigures({
    from: D,
    to: D + DAY,
    changes,
    before: null,
    quiet: [[D + 10 * HOUR, D + 12 * HOUR]],
    parentOff: [[D + 20 * HOUR, D + 21 * HOUR]],
  });
  assert.deepEqual(explained.outages.map((o) => [o.explained, o.duration_s, o.down_s]), [
    ["maintenance", 7200, 0],
    ["dependency", 3600, 0],
  ]);
  assert.equal(explained.longest_outage_s, 0);
  assert.equal(explained.uptime, 1);
  // Before the first change: no data, not counted; a period still off says so.
  const open = serviceFigures({
    from: D,
    to: D + DAY,
    changes: [{ at: D + 12 * HOUR, state: "off" }],
    before: null,
  });
  assert.equal(open.no_data_s, 12 * 3600);
  assert.equal(open.uptime, 0);
  assert.equal(open.outages[0].to, null);
  // Less than 15 minutes measured: no figure.
  const short = serviceFigures({
    from: D,
    to: D + DAY,
    changes: [{ at: D + DAY - 10 * MINUTE, state: "ok" }],
    before: null,
  });
  assert.equal(short.uptime, null);
  assert.deepEqual(offSpans(changes, null, D, D + DAY), [
    [D + 10 * HOUR, D + 12 * HOUR],
    [D + 20 * HOUR, D + 21 * HOUR],
  ]);
});

Deno.test("report words and ranges", () => {
  assert.deepEqual(monthRange("2026-02"), [D, Date.UTC(2026, 2, 1)]);
  assert.equal(monthRange("2026-13"), null);
  assert.equal(dayAt("2026-02-30"), null);
  assert.equal(previousMonth(Date.UTC(2026, 0, 15)), "2025-12");
  assert.equal(durationText(45), "45 s");
  assert.equal(durationText(3 * 3600 + 5 * 60), "3 h 5 min");
  assert.equal(durationText(50 * 3600), "2 d 2 h");
  assert.equal(uptimeText(0.99999), "99.999 %");
  assert.equal(uptimeText(1), "100 %");
  assert.equal(uptimeText(null), "not measured");
});

Deno.test("reports API: JSON, CSV, refusals in plain words, the monthly mail once", async () => {
  await using t = await testApp();
  const { account, token } = await t.account("ada@reports.test");
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Nightly backup", check: "webhook:", interval: 60 },
  });
  assert.equal(made.status, 200, made.text);
  const id = (made.body as { item: { id: number } }).item.id;
  // Last month: up from its first day, down for 90 minutes on the 10th.
  const now = t.clock.now();
  const month = previousMonth(now);
  const [from] = monthRange(month)!;
  const op = atomic(t.kv);
  recordChange(op, account.id, id, from, { state: "ok", status: "ok" });
  recordChange(op, account.id, id, from + 9 * DAY, { state: "off", status: "late" });
  recordChange(op, account.id, id, from + 9 * DAY + 90 * MINUTE, { state: "ok", status: "ok" });
  await commit(op);

  const r = await t.req("GET", `/api/me/reports?month=${month}`, { token });
  assert.equal(r.status, 200, r.text);
  const body = r.body as {
    rule: string;
    services: { name: string; down_s: number; outages: unknown[]; uptime: number }[];
    totals: { longest_outage_s: number };
  };
  assert.match(body.rule, /maintenance window is left out/);
  const row = body.services.find((s) => s.name === "Nightly backup")!;
  assert.equal(row.down_s, 90 * 60);
  assert.equal(row.outages.length, 1);
  assert.equal(body.totals.longest_outage_s, 90 * 60);

  const csv = await t.req("GET", `/api/me/reports/csv?month=${month}&service=${id}`, { token });
  assert.equal(csv.status, 200);
  assert.match(csv.headers.get("content-type")!, /^text\/csv/);
  const lines = csv.text.split("\r\n");
  assert.match(lines[0], /^service,kind,group,from,to,uptime_percent/);
  assert.match(lines[1], /^Nightly backup,webhook,/);
  assert.ok(lines.some((l) => l.startsWith("Nightly backup,") && l.includes(",5400,5400,")));

  for (
    const [q, field, words] of [
      ["month=2026-13", "month", /YYYY-MM/],
      ["month=2026-02&from=2026-02-01&to=2026-02-02", "month", /not both/],
      ["from=2026-02-05&to=2026-02-01", "to", /same day as from or later/],
      ["from=2020-01-01&to=2020-01-31", "from", /kept 90 days/],
    ] as const
  ) {
    const bad = await t.req("GET", `/api/me/reports?${q}`, { token });
    assert.equal(bad.status, 400, q);
    const e = bad.body as { error: string; field?: string };
    assert.equal(e.field, field, q);
    assert.match(e.error, words, q);
  }
  assert.equal((await t.req("GET", "/api/me/reports?service=999", { token })).status, 404);

  // The monthly mail: asked for, it comes once for each month that ends after.
  const put = (monthly: boolean) =>
    t.req("PUT", "/api/me/reports/mail", { token, body: { monthly } });
  assert.deepEqual((await put(true)).body, { monthly: true });
  assert.deepEqual((await t.req("GET", "/api/me/reports/mail", { token })).body, { monthly: true });
  assert.equal(await mailMonthlyReports(t.deps), 0, "the month now ending comes first");
  assert.deepEqual((await put(false)).body, { monthly: false });
  assert.equal((await put("yes" as unknown as boolean)).status, 400);
  t.clock.advance(31 * DAY);
  assert.equal(await mailMonthlyReports(t.deps), 0, "turned off: none");
  await setReportMail(t.deps, account.id, true);
  t.clock.advance(31 * DAY);
  assert.equal(await mailMonthlyReports(t.deps), 1);
  assert.equal(await mailMonthlyReports(t.deps), 0, "once a month");
});

Deno.test("reports page: the form, the report, wrong input beside its field, the mail toggle", async () => {
  await using t = await testApp();
  const { token } = await t.account("bo@reports.test");
  const cookie = { cookie: `session=${token}` };
  await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Front door", check: "webhook:", interval: 60 },
  });
  const page = await t.req("GET", "/me/reports", { headers: cookie });
  assert.equal(page.status, 200);
  assert.match(page.text, /<h1>Uptime report<\/h1>/);
  assert.match(page.text, /How uptime is counted/);
  assert.match(page.text, /Front door/);
  assert.match(page.text, /href="\/me\/reports\/csv"/);
  const bad = await t.req("GET", "/me/reports?what=&month=2026-13", { headers: cookie });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /aria-invalid="true"/);
  assert.match(bad.text, /value="2026-13"/, "what was typed is kept");
  const on = await t.req("POST", "/me/reports/mail/on", {
    headers: {
      ...cookie,
      origin: "http://test.local",
      "content-type": "application/x-www-form-urlencoded",
    },
    raw: "",
  });
  assert.equal(on.status, 303);
  assert.match(
    (await t.req("GET", "/me/reports", { headers: cookie })).text,
    /Stop the monthly mail/,
  );
  const csv = await t.req("GET", "/me/reports/csv", { headers: cookie });
  assert.equal(csv.status, 200);
  assert.match(csv.text, /^service,kind/);
});
