/**
 * systemd OnCalendar expressions with Healthchecks' semantics: a port of the `oncalendar`
 * package (github.com/cuu508/oncalendar, 1.1, BSD) that Healthchecks evaluates them with, its
 * tests ported in tests/oncalendar_test.ts. No maintained npm parser follows systemd's syntax
 * (weekdays, `*-*-1/7`, `~` for the last days, `..` ranges, the shorthands, a time zone at the
 * end, several expressions one a line), so this one does. Pure: times are milliseconds.
 *
 * Each expression is `[weekdays] [year-month-day] [hour:minute[:second]] [time zone]`, the parts
 * absent reading `*` (the time `00:00:00`); several are one a line, and the next time is the
 * earliest of theirs. A time is computed on the wall clock of its zone (the expression's, else
 * the schedule's `tz`): one that a daylight-saving change skips is not a time, one it repeats
 * comes once, at its first occurrence. Iteration stops at the year 2200, as systemd's does.
 */

export class OnCalendarError extends Error {}

const MAX_YEAR = 2200;
const F = { dow: 0, year: 1, month: 2, day: 3, hour: 4, minute: 5, second: 6 } as const;
type Field = typeof F[keyof typeof F];
const RANGES: [number, number][] = [[0, 6], [1970, MAX_YEAR - 1], [1, 12], [1, 31], [0, 23], [
  0,
  59,
], [0, 59]];
const NAMES = ["day-of-week", "year", "month", "day-of-month", "hour", "minute", "second"];
const DAYS = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"];
const DAYS_SHORT = DAYS.map((d) => d.slice(0, 3));
const SPECIALS: Record<string, string> = {
  minutely: "*-*-* *:*:00",
  hourly: "*-*-* *:00:00",
  daily: "*-*-* 00:00:00",
  monthly: "*-*-01 00:00:00",
  weekly: "Mon *-*-* 00:00:00",
  yearly: "*-01-01 00:00:00",
  annually: "*-01-01 00:00:00",
  quarterly: "*-01,04,07,10-01 00:00:00",
  semiannually: "*-01,07-01 00:00:00",
};
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const bad = (f: Field): never => {
  throw new OnCalendarError(`Bad ${NAMES[f]}`);
};
const all = (f: Field) => {
  const out = new Set<number>();
  for (let v = RANGES[f][0]; v <= RANGES[f][1]; v++) out.add(v);
  return out;
};

function digits(f: Field, s: string): number {
  if (!/^[0-9]+$/.test(s)) bad(f);
  return Number(s);
}

/** One value of a field: weekday names, two-digit years, and the field's range checked. */
function value(f: Field, s: string): number {
  if (f === F.dow) {
    const u = s.toUpperCase();
    const i = DAYS.includes(u) ? DAYS.indexOf(u) : DAYS_SHORT.indexOf(u);
    return i >= 0 ? i : bad(f);
  }
  let v = digits(f, s);
  if (f === F.year && v < 70) v += 2000;
  if (f === F.year && v < 100) v += 1900;
  if (v < RANGES[f][0] || v > RANGES[f][1]) bad(f);
  return v;
}

/** A component (lists, ranges, steps; `~` counts days from the month's end) as its values. */
function parseField(f: Field, s: string, reverse = false): Set<number> {
  if (f === F.day && s.startsWith("~")) return parseField(f, s.slice(1), true);
  if (f !== F.dow && s === "*") return all(f);
  if (s.includes("*")) bad(f);
  if (f === F.dow && s.endsWith(",")) return parseField(f, s.slice(0, -1));
  if (f === F.dow && s.includes("-")) return parseField(f, s.replaceAll("-", ".."));
  if (s.includes(",")) {
    const out = new Set<number>();
    for (const term of s.split(",")) for (const v of parseField(f, term, reverse)) out.add(v);
    return out;
  }
  if (s.includes("/") && f !== F.dow) {
    const at = s.indexOf("/");
    const step = digits(f, s.slice(at + 1));
    if (step === 0) bad(f);
    const items = parseField(f, s.slice(0, at), reverse);
    const out = new Set<number>();
    if (items.size === 1) {
      const start = [...items][0];
      const end = reverse ? 0 : RANGES[f][1];
      for (let v = start; v <= end; v += step) out.add(v);
      return out;
    }
    [...items].sort((a, b) => a - b).forEach((v, i) => i % step === 0 && out.add(v));
    return out;
  }
  if (s.includes("..")) {
    const at = s.indexOf("..");
    let start = value(f, s.slice(0, at));
    let end = value(f, s.slice(at + 2));
    if (end < start) bad(f);
    if (reverse) [start, end] = [-end, -start];
    const out = new Set<number>();
    for (let v = start; v <= end; v++) out.add(v);
    return out;
  }
  let v = value(f, s);
  if (reverse) {
    if (v > 28) bad(f);
    v = -v;
  }
  return new Set([v]);
}

interface Spec {
  weekdays: Set<number>;
  years: Set<number>;
  months: Set<number>;
  days: Set<number>;
  hours: Set<number>;
  minutes: Set<number>;
  seconds: Set<number>;
  anyReverseDay: boolean;
}

/** One expression without a time zone (oncalendar's `BaseIterator` parse). */
function parseSpec(expression: string): Spec {
  const special = SPECIALS[expression.toLowerCase()];
  const parts = (special ?? expression).replaceAll("~", "-~").split(/\s+/).filter((p) => p);
  if (parts.length === 0) throw new OnCalendarError("Wrong number of fields");
  let hours = new Set([0]), minutes = new Set([0]), seconds = new Set([0]);
  if (parts.at(-1)!.includes(":")) {
    const t = parts.pop()!.split(":");
    if (t.length !== 2 && t.length !== 3) throw new OnCalendarError("Bad time");
    if (t.length === 2) t.push("0");
    hours = parseField(F.hour, t[0]);
    minutes = parseField(F.minute, t[1]);
    seconds = parseField(F.second, t[2]);
  }
  let years = all(F.year), months = all(F.month), days = all(F.day);
  const last = parts.at(-1);
  if (last && last.includes("-") && "0123456789*".includes(last[0])) {
    const d = parts.pop()!.split("-");
    if (d.length !== 2 && d.length !== 3) throw new OnCalendarError("Bad date");
    if (d.length === 2) d.unshift("*");
    years = parseField(F.year, d[0]);
    months = parseField(F.month, d[1]);
    days = parseField(F.day, d[2]);
  }
  const weekdays = parts.length ? parseField(F.dow, parts.shift()!) : all(F.dow);
  if (parts.length) throw new OnCalendarError("Wrong number of fields");
  const anyReverseDay = [...days].some((d) => d < 0);
  return { weekdays, years, months, days, hours, minutes, seconds, anyReverseDay };
}

/** The formatter that reads an instant's wall-clock fields in a zone (kept per zone below). */
export function zoneFormatter(tz: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
}

/** Wall-clock time (milliseconds read as UTC fields) of an instant in a zone. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function wallOf(tz: string, t: number): number {
  if (tz === "UTC") return t;
  let f = formatters.get(tz);
  if (!f) {
    f = zoneFormatter(tz);
    formatters.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(t))) p[part.type] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) + (t % 1000 + 1000) %
      1000;
}

/**
 * The instant a wall-clock time of a zone is, the first when a change repeats it (Python's
 * `fold=0`); null when a change skips it.
 */
function instantOf(tz: string, wall: number): number | null {
  if (tz === "UTC") return wall;
  const found: number[] = [];
  for (const probe of [wall - DAY, wall + DAY]) {
    const t = wall - (wallOf(tz, probe) - probe);
    if (wallOf(tz, t) === wall && !found.includes(t)) found.push(t);
  }
  return found.length ? Math.min(...found) : null;
}

/** The first time of one expression after `after` (ms), in `tz`; null: none before 2200. */
function nextOfSpec(spec: Spec, tz: string, after: number): number | null {
  // The wall clock as a Date in UTC fields, whole seconds (oncalendar drops microseconds).
  let dt = Math.floor(wallOf(tz, after) / SECOND) * SECOND + SECOND;
  const d = () => new Date(dt);
  const weekday = (t: number) => (new Date(t).getUTCDay() + 6) % 7;
  const dayStart = (t: number) => Math.floor(t / DAY) * DAY;
  for (let guard = 0; guard < 1_000_000; guard++) {
    // Year.
    if (!spec.years.has(d().getUTCFullYear())) {
      let y = d().getUTCFullYear();
      while (!spec.years.has(y) && y < MAX_YEAR) y++;
      dt = Date.UTC(y, 0, 1);
    }
    if (d().getUTCFullYear() >= MAX_YEAR) return null;
    // Month.
    if (!spec.months.has(d().getUTCMonth() + 1)) {
      let y = d().getUTCFullYear(), m = d().getUTCMonth();
      while (!spec.months.has(m + 1)) {
        m++;
        if (m === 12) [y, m] = [y + 1, 0];
      }
      dt = Date.UTC(y, m, 1);
      continue;
    }
    // Day of month and weekday.
    const matchDay = (t: number) => {
      const x = new Date(t);
      if (!spec.weekdays.has(weekday(t))) return false;
      if (spec.days.has(x.getUTCDate())) return true;
      if (!spec.anyReverseDay) return false;
      const last = new Date(Date.UTC(x.getUTCFullYear(), x.getUTCMonth() + 1, 0)).getUTCDate();
      return spec.days.has(x.getUTCDate() - last - 1);
    };
    if (!matchDay(dt)) {
      let needle = dayStart(dt);
      do {
        needle += DAY;
      } while (!matchDay(needle) && new Date(needle).getUTCDate() !== 1);
      dt = needle;
      continue;
    }
    // Hour, minute, second.
    if (!spec.hours.has(d().getUTCHours())) {
      dt = Math.floor(dt / HOUR) * HOUR;
      do dt += HOUR; while (!spec.hours.has(d().getUTCHours()) && d().getUTCHours() !== 0);
      continue;
    }
    if (!spec.minutes.has(d().getUTCMinutes())) {
      dt = Math.floor(dt / MINUTE) * MINUTE;
      do dt += MINUTE; while (!spec.minutes.has(d().getUTCMinutes()) && d().getUTCMinutes() !== 0);
      continue;
    }
    if (!spec.seconds.has(d().getUTCSeconds())) {
      do dt += SECOND; while (!spec.seconds.has(d().getUTCSeconds()) && d().getUTCSeconds() !== 0);
      continue;
    }
    const at = instantOf(tz, dt);
    if (at !== null && at > after) return at;
    // Skipped by a daylight-saving change (or before `after` by the repeated hour): on.
    dt += SECOND;
  }
  return null;
}

interface Parsed {
  spec: Spec;
  /** The expression's own time zone, when it names one. */
  tz: string | null;
}

const knownZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

/** One line: a trailing IANA zone (oncalendar's `TzIterator`) and the expression before it. */
function parseLine(line: string): Parsed {
  const expr = line.trim();
  const at = expr.search(/\s\S+$/);
  if (at > 0) {
    const maybe = expr.slice(at + 1);
    if (!"0123456789*".includes(maybe[0]) && knownZone(maybe)) {
      return { spec: parseSpec(expr.slice(0, at)), tz: maybe };
    }
  }
  return { spec: parseSpec(expr), tz: null };
}

const cache = new Map<string, Parsed[]>();

/** Parses one or more expressions, one a line; throws OnCalendarError naming what is wrong. */
export function parseOnCalendar(expressions: string): Parsed[] {
  let got = cache.get(expressions);
  if (!got) {
    got = expressions.trim().split("\n").map(parseLine);
    if (cache.size > 10_000) cache.clear();
    cache.set(expressions, got);
  }
  return got;
}

/** The first time of the expressions strictly after `after` (ms), in `tz`; null: none left. */
export function nextOnCalendar(expressions: string, tz: string, after: number): number | null {
  let best: number | null = null;
  for (const p of parseOnCalendar(expressions)) {
    const t = nextOfSpec(p.spec, p.tz ?? tz, after);
    if (t !== null && (best === null || t < best)) best = t;
  }
  return best;
}

/** Whether a schedule is a cron line (one line of five fields, as Healthchecks guesses it). */
export const isCronLine = (schedule: string) =>
  !schedule.trim().includes("\n") && schedule.trim().split(/\s+/).length === 5;
