import assert from "node:assert/strict";
import { nextOnCalendar, OnCalendarError, parseOnCalendar } from "../lib/oncalendar.ts";

/**
 * lib/oncalendar.ts against the tests of the `oncalendar` package Healthchecks evaluates
 * OnCalendar schedules with (github.com/cuu508/oncalendar tests/test_baseiterator.py,
 * test_tziterator.py, test_oncalendar.py), ported case by case.
 */

const NOW = Date.UTC(2020, 0, 1);
const iso = (t: number | null) =>
  t === null ? null : new Date(t).toISOString().replace(".000Z", "Z");

/** The first `n` times after `from` (UTC unless `tz`), as ISO strings. */
function times(expr: string, n: number, from = NOW, tz = "UTC"): (string | null)[] {
  const out: (string | null)[] = [];
  let t: number | null = from;
  for (let i = 0; i < n; i++) {
    t = t === null ? null : nextOnCalendar(expr, tz, t);
    out.push(iso(t));
  }
  return out;
}

const spec = (expr: string) => parseOnCalendar(expr)[0].spec;
const range = (a: number, b: number) => new Set(Array.from({ length: b - a + 1 }, (_, i) => a + i));

Deno.test("oncalendar: parses stars, weekdays, dates, times, lists, ranges, steps and ~ (test_baseiterator TestParse)", () => {
  const stars = spec("*-*-* *:*:*");
  assert.deepEqual(stars.weekdays, range(0, 6));
  assert.deepEqual(stars.years, range(1970, 2199));
  assert.deepEqual(stars.hours, range(0, 23));
  assert.deepEqual(stars.seconds, range(0, 59));
  for (const s of ["Mon", "MON", "Monday", "MONDAY"]) {
    assert.deepEqual(spec(s).weekdays, new Set([0]));
    assert.deepEqual(spec(s).hours, new Set([0]));
  }
  const comma = spec("Mon, 12:34");
  assert.deepEqual(comma.weekdays, new Set([0]));
  assert.deepEqual([comma.hours, comma.minutes], [new Set([12]), new Set([34])]);
  for (const s of ["Mon..Tue", "Mon,Tue", "Mon-Tue"]) {
    assert.deepEqual(spec(s).weekdays, new Set([0, 1]));
  }
  const date = spec("2023-11-30");
  assert.deepEqual([date.years, date.months, date.days], [
    new Set([2023]),
    new Set([11]),
    new Set([30]),
  ]);
  assert.deepEqual(spec("11-30").years, range(1970, 2199));
  assert.deepEqual(spec("69-*-*").years, new Set([2069]));
  assert.deepEqual(spec("70-*-*").years, new Set([1970]));
  const time = spec("11:22:33");
  assert.deepEqual([time.hours, time.minutes, time.seconds], [
    new Set([11]),
    new Set([22]),
    new Set([33]),
  ]);
  assert.deepEqual(spec("11:22").seconds, new Set([0]));
  assert.deepEqual(spec("*:1,2,3").minutes, new Set([1, 2, 3]));
  assert.deepEqual(spec("*:1..3").minutes, new Set([1, 2, 3]));
  assert.deepEqual(spec("*:1..3,7..9:*").minutes, new Set([1, 2, 3, 7, 8, 9]));
  assert.deepEqual(spec("*:0/15").minutes, new Set([0, 15, 30, 45]));
  assert.deepEqual(spec("*:0..10/2").minutes, new Set([0, 2, 4, 6, 8, 10]));
  assert.deepEqual(spec("*:5/15").minutes, new Set([5, 20, 35, 50]));
  assert.deepEqual(spec("*-*~1").days, new Set([-1]));
  assert.deepEqual(spec("*~1").days, new Set([-1]));
  assert.deepEqual(spec("*-*~1,8").days, new Set([-1, -8]));
  assert.deepEqual(spec("*-*~1..3").days, new Set([-1, -2, -3]));
  assert.deepEqual(spec("*-*~1..2,4..5").days, new Set([-1, -2, -4, -5]));
  assert.deepEqual(spec("*-*~1..5/2").days, new Set([-1, -3, -5]));
  assert.deepEqual(spec("*-*~3/2").days, new Set([-1, -3]));
  for (const s of ["minutely", "Minutely", "MINUTELY", "MiNuTeLY"]) {
    assert.deepEqual(spec(s).minutes, range(0, 59));
    assert.deepEqual(spec(s).seconds, new Set([0]));
  }
});

Deno.test("oncalendar: refuses what systemd refuses (test_baseiterator TestValidation)", () => {
  const refused = (expr: string, why?: RegExp) =>
    assert.throws(() => parseOnCalendar(expr), (e: unknown) => {
      assert.ok(e instanceof OnCalendarError, `${expr}: ${e}`);
      if (why) assert.match(e.message, why);
      return true;
    }, expr);
  refused("", /Wrong number of fields/);
  refused("Mon *-*-* *:*:* surprise", /Wrong number of fields/);
  const patterns = [
    "%s *-*-* *:*:*",
    "%s-*-*",
    "*-%s-*",
    "*-*-%s",
    "*-*~%s",
    "%s:*:*",
    "*:%s:*",
    "*:*:%s",
  ];
  const values = ["-1", "1000", "ABC", "1-1", "1:1", "Mon/1", "~1", "*/1", "*,1", "1..*"];
  for (const p of patterns) for (const v of values) refused(p.replace("%s", v));
  refused("*-*-5..1", /Bad day-of-month/);
  refused("*:1..1_0", /Bad minute/);
  refused("*:*/0", /Bad minute/);
  refused("1-32", /Bad day-of-month/);
  refused("* 1-1", /Bad day-of-week/);
  refused("1~29", /Bad day-of-month/);
  // test_tziterator: a bad zone is no zone, a lone zone no weekday.
  refused("12:34 Europe/Surprise");
  refused("12:34 Europe/");
  for (const s of ["Europe/Riga", " Europe/Riga", "Europe/Riga "]) refused(s, /Bad day-of-week/);
});

Deno.test("oncalendar: iterates as oncalendar does (test_baseiterator TestIterator)", () => {
  assert.deepEqual(times("2020-01-01 8..9:0:0", 3), [
    "2020-01-01T08:00:00Z",
    "2020-01-01T09:00:00Z",
    null,
  ]);
  assert.deepEqual(times("*:*:0/5", 2), ["2020-01-01T00:00:05Z", "2020-01-01T00:00:10Z"]);
  assert.deepEqual(times("*:*", 2), ["2020-01-01T00:01:00Z", "2020-01-01T00:02:00Z"]);
  assert.deepEqual(times("Mon 2-29", 2), ["2044-02-29T00:00:00Z", "2072-02-29T00:00:00Z"]);
  assert.deepEqual(times("*~1", 3), [
    "2020-01-31T00:00:00Z",
    "2020-02-29T00:00:00Z",
    "2020-03-31T00:00:00Z",
  ]);
  assert.deepEqual(times("Sun *~7/1", 3), [
    "2020-01-26T00:00:00Z",
    "2020-02-23T00:00:00Z",
    "2020-03-29T00:00:00Z",
  ]);
  assert.deepEqual(times("2019-01-01", 1), [null]);
  assert.deepEqual(times("00:00", 1, Date.UTC(2020, 0, 1, 1)), ["2020-01-02T00:00:00Z"]);
});

Deno.test("oncalendar: daylight saving in Europe/Riga, a zone in the expression, several lines (TestDstHandling, test_tziterator, test_oncalendar)", () => {
  const riga = Date.parse("2020-01-01T00:00:00+02:00");
  assert.deepEqual(times("*:*", 2, riga, "Europe/Riga"), [
    "2019-12-31T22:01:00Z",
    "2019-12-31T22:02:00Z",
  ]);
  // Spring: 2020-03-29 03:30 does not exist there and is skipped.
  assert.deepEqual(times("*-*-29 3:30", 3, riga, "Europe/Riga"), [
    iso(Date.parse("2020-01-29T03:30:00+02:00")),
    iso(Date.parse("2020-02-29T03:30:00+02:00")),
    iso(Date.parse("2020-04-29T03:30:00+03:00")),
  ]);
  // Autumn: 2020-10-25 03:30 happens once (the first, summer time).
  const oct = Date.parse("2020-10-01T00:00:00+03:00");
  assert.deepEqual(times("*-*-25 3:30", 3, oct, "Europe/Riga"), [
    iso(Date.parse("2020-10-25T03:30:00+03:00")),
    iso(Date.parse("2020-11-25T03:30:00+02:00")),
    iso(Date.parse("2020-12-25T03:30:00+02:00")),
  ]);
  for (const s of ["12:34", "*-*-* 12:34"]) {
    assert.deepEqual(times(s, 2), ["2020-01-01T12:34:00Z", "2020-01-02T12:34:00Z"]);
  }
  assert.deepEqual(times("12:34 Europe/Riga", 2), ["2020-01-01T10:34:00Z", "2020-01-02T10:34:00Z"]);
  // The expression's zone wins over the schedule's.
  assert.deepEqual(times("12:34 Europe/Riga", 1, NOW, "Europe/Berlin"), ["2020-01-01T10:34:00Z"]);
  assert.deepEqual(times("00:00\n12:34", 4), [
    "2020-01-01T12:34:00Z",
    "2020-01-02T00:00:00Z",
    "2020-01-02T12:34:00Z",
    "2020-01-03T00:00:00Z",
  ]);
  assert.deepEqual(times("2020-01-02\n12:34", 4), [
    "2020-01-01T12:34:00Z",
    "2020-01-02T00:00:00Z",
    "2020-01-02T12:34:00Z",
    "2020-01-03T12:34:00Z",
  ]);
  assert.deepEqual(times("2018-01-01\n2019-01-01", 1), [null]);
});
