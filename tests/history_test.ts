import assert from "node:assert/strict";
import { DAY, HOUR } from "../lib/clock.ts";
import {
  buckets,
  type Change,
  dailyFigures,
  offPeriods,
  percentile,
  uptimeBetween,
} from "../lib/history.ts";
import { systemConnector } from "../lib/net.ts";
import {
  badge,
  barColor,
  COLORS,
  msText,
  niceTop,
  percentText,
  responseTimeChart,
  uptimeBars,
} from "../lib/svg.ts";
import { dumpKv, T0, testApp } from "./_helpers.ts";
import { flakyTarget } from "./_servers.ts";

Deno.test("history figures: uptime per day from changes, percentiles, no data is null", () => {
  const day0 = Date.parse("2026-03-01T00:00:00Z");
  const figures = dailyFigures({
    now: day0 + 2 * DAY + 12 * HOUR, // 3 March, noon
    days: 4,
    before: null,
    changes: [
      { at: day0 + 6 * HOUR, state: "ok" },
      { at: day0 + 18 * HOUR, state: "off" },
      { at: day0 + DAY + 6 * HOUR, state: "warn" },
      { at: day0 + DAY + 7 * HOUR, state: "ok" },
    ],
    durations: new Map([["2026-03-01", [10, 30, 20, 40, 1000]]]),
  });
  assert.deepEqual(figures.map((d) => d.date), [
    "2026-02-28",
    "2026-03-01",
    "2026-03-02",
    "2026-03-03",
  ]);
  assert.equal(figures[0].uptime, null, "before the first change nothing is known");
  assert.equal(figures[1].uptime, 12 / 18, "up 06:00-18:00, off 18:00-24:00");
  assert.equal(figures[1].down_s, 6 * 3600);
  assert.equal(figures[2].uptime, 18 / 24, "off until 06:00, then warn and ok (both up)");
  assert.equal(figures[3].uptime, 1, "today so far");
  assert.equal(figures[1].checks, 5);
  assert.equal(figures[1].median_ms, 30);
  assert.equal(figures[1].p95_ms, 1000);
  assert.equal(figures[2].median_ms, null);
  assert.equal(percentile([5], 95), 5);
  assert.equal(
    percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 95),
    19,
  );
});

Deno.test("svg: 90 bars coloured by time down, with dates and words; a chart; a badge", () => {
  const days = Array.from({ length: 90 }, (_, i) => ({
    date: `d${i}`,
    uptime: i === 0 ? null : i === 1 ? 0.5 : i === 2 ? 1439 / 1440 : i === 3 ? null : 1,
    down_s: i === 1 ? 12 * 3600 : i === 2 ? 60 : 0,
    maintenance_s: i === 3 ? 86400 : 0,
  }));
  const bars = uptimeBars(days);
  assert.equal(bars.match(/<rect /g)?.length, 90);
  assert.match(bars, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.ok(bars.includes(`class="t-none" fill="${barColor(days[0])}"><title>d0: no data</title>`));
  assert.ok(bars.includes(`class="t-off" fill="${COLORS.off}"><title>d1: down 12 h (50 % up)`));
  // One failed minute in a day: yellow (down less than an hour), never red, never 0 %.
  assert.ok(
    bars.includes(`class="t-warn" fill="${COLORS.warn}"><title>d2: down 1 min (99.93 % up)`),
  );
  assert.ok(bars.includes(`class="t-maintenance"`), "a day all in maintenance is blue");
  assert.ok(bars.includes(`<title>d4: up all day (100 %)</title>`));
  // A service down since its creation a moment ago: its day is not green, nor "up all day".
  const fresh = uptimeBars([{ date: "today", uptime: 0, down_s: 0 }]);
  assert.ok(
    fresh.includes(
      `class="t-warn" fill="${COLORS.warn}"><title>today: down under a minute (0 % up)`,
    ),
  );
  assert.equal(percentText(0.99999), "99.99 %", "never rounded up to 100");
  assert.equal(percentText(1), "100 %");
  const from = Date.UTC(2026, 2, 1);
  const stretches = buckets(
    [
      { at: from + 1_000, ms: 10, state: "ok" },
      { at: from + 2_000, ms: 40, state: "off" },
      { at: from + 3 * HOUR, ms: 20, state: "ok" },
      { at: from + 4 * HOUR, ms: 999, state: "ok" }, // at the end: outside [from, to)
    ],
    from,
    from + 4 * HOUR,
    4,
  );
  assert.deepEqual(stretches.map((b) => [b.checks, b.failed, b.median_ms, b.p95_ms]), [
    [2, 1, 10, 40],
    [0, 0, null, null],
    [0, 0, null, null],
    [1, 0, 20, 20],
  ]);
  const chart = responseTimeChart(stretches.map((b) => ({ ...b, label: "x" })), {
    from,
    to: from + 4 * HOUR,
    ticks: [{ at: from + 2 * HOUR, text: "02:00", kind: "hour" }, {
      at: from + 5 * HOUR,
      text: "outside",
      kind: "hour",
    }],
    down: [[from, from + HOUR]],
    label: 'Response <"time">',
  });
  assert.match(chart, />50 ms</, "the scale's top is a round figure above the slowest");
  assert.match(chart, />25 ms</);
  assert.equal(chart.match(/<path d="M[^"]*M/g)?.length, 2, "a gap in both lines");
  assert.match(chart, /text-anchor="middle" data-at="\d+" data-tick="hour">02:00</);
  assert.doesNotMatch(chart, /outside/, "no tick outside the period");
  assert.equal(chart.match(/class="down-span"/g)?.length, 1);
  assert.equal(chart.match(/class="t-off"/g)?.length, 1, "one stretch with a failed check");
  assert.ok(chart.includes('aria-label="Response &lt;&quot;time&quot;&gt;"'));
  assert.doesNotMatch(chart.split("<svg x")[0], /viewBox/, "the outer picture keeps text size");
  assert.deepEqual([0, 7, 10, 11, 180, 2500].map(niceTop), [10, 10, 10, 20, 200, 5000]);
  assert.deepEqual([999, 1000, 1540].map(msText), ["999 ms", "1 s", "1.5 s"]);
  const b = badge('<a "x">', "off");
  assert.ok(b.includes("&lt;a &quot;x&quot;&gt;: down"));
  assert.ok(!b.includes("<a "));
});

Deno.test("history: state changes and durations of real checks, per day, through the API", async () => {
  await using target = flakyTarget();
  await using t = await testApp({ connector: systemConnector });
  const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
  const made = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Site", check: target.check },
  });
  const id = made.body.item.id;
  const check = () => t.req("POST", `/api/me/services/${id}/check`, { token });
  // 2 March: ok from 09:00, off 12:00 to 18:00, ok again.
  t.clock.set(T0 + 3 * HOUR);
  target.failing = true;
  assert.equal((await check()).body.item.state, "off");
  t.clock.set(T0 + 9 * HOUR);
  target.failing = false;
  assert.equal((await check()).body.item.state, "ok");
  t.clock.set(T0 + 27 * HOUR); // 3 March, 12:00
  await check();

  const r = await t.req("GET", `/api/me/services/${id}/history`, { token });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.days.length, 90);
  const [d1, d2] = r.body.days.slice(-2);
  assert.equal(d1.date, "2026-03-02");
  assert.equal(d1.uptime, 9 / 15);
  assert.equal(d1.down_s, 6 * 3600);
  assert.equal(d1.checks, 3);
  assert.ok(d1.median_ms <= d1.p95_ms);
  assert.equal(d2.date, "2026-03-03");
  assert.equal(d2.uptime, 1);
  assert.equal(d2.checks, 1);
  assert.equal(r.body.days[0].uptime, null);
  assert.deepEqual(r.body.changes.map((c: { state: string }) => c.state), ["ok", "off", "ok"]);
  assert.equal(r.body.changes[1].at, new Date(T0 + 3 * HOUR).toISOString());
  assert.match(r.body.changes[1].status, /HTTP 503/);
  // Time up over time measured, summed over the days (not a mean of the days' figures).
  assert.equal(r.body.uptime, (9 + 12) / (15 + 12));

  // Another account sees nothing; deletion takes the history along.
  const other = await t.account("other@example.org", { name: "Other" });
  const foreign = await t.req("GET", `/api/me/services/${id}/history`, { token: other.token });
  assert.equal(foreign.status, 404);
  assert.equal((await t.req("DELETE", `/api/me/services/${id}`, { token })).status, 200);
  const dump = await dumpKv(t.kv);
  assert.ok(!dump.includes("service_changes") && !dump.includes("service_days"), dump);
});

Deno.test("uptime: time up over time measured, at its edges", async (t) => {
  const day0 = Date.parse("2026-03-01T00:00:00Z");
  const M = 60_000;
  // Each case: the changes, the state before them, the period, maintenance, the figure.
  const cases: {
    name: string;
    changes: Change[];
    before?: "ok" | "off" | null;
    from?: number;
    to: number;
    quiet?: [number, number][];
    want: number | null;
  }[] = [
    {
      name: "first day, measured one minute, that minute failed: no figure, not 0 %",
      changes: [{ at: day0 + 11 * HOUR, state: "off" }],
      to: day0 + 11 * HOUR + M,
      want: null,
    },
    {
      name: "first day: a failed minute, then up for two hours: the measured part only",
      changes: [{ at: day0 + 10 * HOUR, state: "off" }, { at: day0 + 10 * HOUR + M, state: "ok" }],
      to: day0 + 12 * HOUR,
      want: 119 / 120,
    },
    {
      name: "a whole day with one failed minute",
      changes: [{ at: day0 + 5 * HOUR, state: "off" }, { at: day0 + 5 * HOUR + M, state: "ok" }],
      before: "ok",
      to: day0 + DAY,
      want: (1440 - 1) / 1440,
    },
    {
      name: "a day all in maintenance, down meanwhile: not measured",
      changes: [{ at: day0 + HOUR, state: "off" }],
      before: "ok",
      to: day0 + DAY,
      quiet: [[day0, day0 + DAY]],
      want: null,
    },
    {
      name: "down only during maintenance: 100 %",
      changes: [{ at: day0 + HOUR, state: "off" }, { at: day0 + 2 * HOUR, state: "ok" }],
      before: "ok",
      to: day0 + DAY,
      quiet: [[day0 + HOUR, day0 + 2 * HOUR]],
      want: 1,
    },
    { name: "a day with no data", changes: [], before: null, to: day0 + DAY, want: null },
    {
      name: "no data for a day, then a day up: the empty day does not count",
      changes: [{ at: day0 + DAY, state: "ok" }],
      before: null,
      to: day0 + 2 * DAY,
      want: 1,
    },
    {
      name: "waiting (paused) time is not measured",
      changes: [{ at: day0 + 6 * HOUR, state: "wait" }, { at: day0 + 18 * HOUR, state: "off" }],
      before: "ok",
      to: day0 + DAY,
      want: 6 / 12,
    },
    {
      name: "late (warn) counts as up",
      changes: [{ at: day0 + 12 * HOUR, state: "warn" }],
      before: "ok",
      to: day0 + DAY,
      want: 1,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const got = uptimeBetween({
        changes: c.changes,
        before: c.before ?? null,
        from: c.from ?? day0,
        to: c.to,
        quiet: c.quiet,
      });
      if (c.want === null) assert.equal(got, null);
      else assert.ok(got !== null && Math.abs(got - c.want) < 1e-9, `${got} != ${c.want}`);
    });
  }
  assert.equal(percentText(1439 / 1440), "99.93 %");
});

Deno.test("incidents: off periods from state changes, newest first, at the edges", () => {
  const t = (h: number) => Date.UTC(2026, 2, 1) + h * HOUR;
  const cases: [string, Change[], Change["state"] | null, [number, number | null][]][] = [
    ["none", [{ at: t(1), state: "ok" }], null, []],
    [
      "one closed",
      [{ at: t(1), state: "ok" }, { at: t(2), state: "off" }, {
        at: t(3),
        state: "ok",
      }],
      null,
      [[t(2), t(3)]],
    ],
    ["still off", [{ at: t(2), state: "off" }], "ok", [[t(2), null]]],
    ["off before the window", [{ at: t(5), state: "ok" }], "off", [[t(0), t(5)]]],
    [
      "warn does not end it",
      [{ at: t(2), state: "off" }, { at: t(3), state: "warn" }, {
        at: t(4),
        state: "off",
      }, { at: t(6), state: "wait" }],
      null,
      [[t(4), t(6)], [t(2), t(3)]],
    ],
    [
      "a second off does not restart it",
      [{ at: t(2), state: "off" }, {
        at: t(3),
        state: "off",
      }, { at: t(4), state: "ok" }],
      null,
      [[t(2), t(4)]],
    ],
  ];
  for (const [name, changes, before, want] of cases) {
    const got = offPeriods({ changes, before, from: t(0) }).map((p) => [p.from, p.to]);
    assert.deepEqual(got, want, name);
  }
});
