import { DAY, isoDate, MINUTE } from "./clock.ts";
import { merged } from "./maintenance.ts";

/**
 * Figures of a watched service's history, as pure functions of its state changes and check
 * durations: uptime per UTC day and the median and 95th percentile duration per day.
 * Up is ok or warn (the service answered or beat), down is off; time in `wait` (no result
 * yet) counts for neither, so a day with no known state has no uptime (null). Neither does
 * time in a maintenance window (`quiet`): it is counted apart, as `maintenance_s`; nor time
 * when this monitor itself was not running (`gaps`, kv/service/monitor.ts): "no data (monitor down)",
 * counted apart as `monitor_down_s`, neither up nor down.
 */

export type HistState = "ok" | "warn" | "off" | "wait";

export interface Change {
  at: number;
  state: HistState;
}

export interface DayFigures {
  /** YYYY-MM-DD (UTC). */
  date: string;
  /** Fraction of the known time that was up, 0 to 1; null without data. */
  uptime: number | null;
  /** Seconds down (off) within the day, maintenance windows left out. */
  down_s: number;
  /** Seconds of the day in a maintenance window (left out of uptime). */
  maintenance_s: number;
  /** Seconds of the day this monitor was not running: no data, left out of uptime. */
  monitor_down_s: number;
  /** Checks recorded that day (checked kinds). */
  checks: number;
  median_ms: number | null;
  p95_ms: number | null;
}

/** Nearest-rank percentile (p in 0..100) of numbers; null for none. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** The start (00:00 UTC) of the day holding `t`. */
export const dayStart = (t: number) => Math.floor(t / DAY) * DAY;

/**
 * Per-day figures for the `days` days ending with the day of `now` (oldest first).
 * `changes` sorted by time; `before` the state in force when the first day began (null if
 * unknown); `durations` check durations by date.
 */
export function dailyFigures(opts: {
  now: number;
  days: number;
  changes: Change[];
  before: HistState | null;
  durations?: Map<string, number[]>;
  /** Maintenance stretches [start, end), merged and sorted (lib/maintenance.ts). */
  quiet?: [number, number][];
  /** Stretches this monitor was down, sorted (kv/service/monitor.ts). */
  gaps?: [number, number][];
}): DayFigures[] {
  const { now, days, changes } = opts;
  const gaps = opts.gaps ?? [];
  const quiet = opts.quiet ?? [];
  const unknown = unmeasured(quiet, gaps);
  const first = dayStart(now) - (days - 1) * DAY;
  const out: DayFigures[] = [];
  let state: HistState | null = opts.before;
  let ci = 0;
  while (ci < changes.length && changes[ci].at < first) state = changes[ci++].state;
  for (let d = 0; d < days; d++) {
    const from = first + d * DAY;
    const to = Math.min(from + DAY, now);
    const day = upAndDownCounter(unknown, from);
    while (ci < changes.length && changes[ci].at < from + DAY) {
      day.countTo(Math.min(changes[ci].at, to), state);
      state = changes[ci++].state;
    }
    day.countTo(to, state);
    const { up, down } = day.counted;
    const ms = opts.durations?.get(isoDate(from)) ?? [];
    const known = up + down;
    out.push({
      date: isoDate(from),
      uptime: known > 0 ? up / known : null,
      down_s: Math.round(down / 1000),
      maintenance_s: Math.round(overlap(quiet, from, Math.max(from, to)) / 1000),
      monitor_down_s: Math.round(overlap(gaps, from, Math.max(from, to)) / 1000),
      checks: ms.length,
      median_ms: percentile(ms, 50),
      p95_ms: percentile(ms, 95),
    });
  }
  return out;
}

/** What is not measured: maintenance and the monitor's own downtime, merged. */
export const unmeasured = (quiet: [number, number][], gaps: [number, number][]) =>
  gaps.length ? merged([...quiet, ...gaps]) : quiet;

/** Milliseconds of [a, b) that merged `spans` cover. */
export function overlap(spans: [number, number][], a: number, b: number): number {
  let n = 0;
  for (const [x, y] of spans) {
    if (y <= a) continue;
    if (x >= b) break;
    n += Math.min(b, y) - Math.max(a, x);
  }
  return n;
}

/**
 * Less measured time than this gives no uptime figure: a service measured for one minute, that
 * minute failed, is "not measured yet", not "0 %" (its state already says it is off).
 */
export const MIN_MEASURED_MS = 15 * MINUTE;

/**
 * Milliseconds up and down within [from, to), maintenance (`quiet`) and the monitor's own
 * downtime (`gaps`) left out.
 */
export function upAndDown(opts: {
  changes: Change[];
  before: HistState | null;
  from: number;
  to: number;
  quiet?: [number, number][];
  gaps?: [number, number][];
}): { up: number; down: number } {
  const quiet = unmeasured(opts.quiet ?? [], opts.gaps ?? []);
  const span = upAndDownCounter(quiet, opts.from);
  let state = opts.before;
  for (const c of opts.changes) {
    if (c.at >= opts.to) break;
    if (c.at > opts.from) span.countTo(c.at, state);
    state = c.state;
  }
  span.countTo(opts.to, state);
  return span.counted;
}

/**
 * Time up (ok or warn) and down (off) from `from` on: `countTo(until, state)` adds the time since
 * the last count (or `from`) to `until`, spent in `state`, less what the `unknown` spans cover.
 */
function upAndDownCounter(unknown: [number, number][], from: number) {
  const counted = { up: 0, down: 0 };
  let t = from;
  const countTo = (until: number, state: HistState | null) => {
    if (until <= t) return;
    const ms = until - t - overlap(unknown, t, until);
    if (state === "ok" || state === "warn") counted.up += ms;
    else if (state === "off") counted.down += ms;
    t = until;
  };
  return { counted, countTo };
}

/**
 * Uptime over a period: the time up (ok or warn) over the time measured (up or off), summed
 * over the whole period rather than averaged per day, so a first day measured for an hour
 * weighs an hour, not a day. Time before the first result, while waiting or paused, and in
 * maintenance is not measured; a period measured for less than MIN_MEASURED_MS has no figure.
 */
function uptimeOf(span: { up: number; down: number }): number | null {
  const known = span.up + span.down;
  return known < MIN_MEASURED_MS ? null : span.up / known;
}

/** Uptime over [from, to) from the changes (uptimeOf of upAndDown). */
export function uptimeBetween(opts: Parameters<typeof upAndDown>[0]): number | null {
  return uptimeOf(upAndDown(opts));
}

/** One check as the response-time chart reads it. */
interface TimedResult {
  at: number;
  ms: number;
  /** Whether the check failed (off) or warned, besides its duration. */
  state: "ok" | "warn" | "off";
}

/** A stretch of the chart: its checks' median and 95th percentile duration, and failures. */
export interface Bucket {
  from: number;
  to: number;
  checks: number;
  failed: number;
  median_ms: number | null;
  p95_ms: number | null;
}

/**
 * Results in [from, to) split into `count` equal stretches, oldest first; a stretch without
 * checks has null figures (the chart leaves a gap there).
 */
export function buckets(
  results: TimedResult[],
  from: number,
  to: number,
  count: number,
): Bucket[] {
  const size = (to - from) / count;
  const times: number[][] = Array.from({ length: count }, () => []);
  const failed = new Array<number>(count).fill(0);
  for (const r of results) {
    if (r.at < from || r.at >= to) continue;
    const i = Math.min(count - 1, Math.floor((r.at - from) / size));
    times[i].push(r.ms);
    if (r.state === "off") failed[i]++;
  }
  return times.map((ms, i) => ({
    from: Math.round(from + i * size),
    to: Math.round(from + (i + 1) * size),
    checks: ms.length,
    failed: failed[i],
    median_ms: percentile(ms, 50),
    p95_ms: percentile(ms, 95),
  }));
}

/** A time a service was off: from its first failure to its return (`to` null: still off). */
export interface OffPeriod {
  from: number;
  to: number | null;
}

/**
 * The off periods that overlap [from, now], newest first, from the state changes (sorted by
 * time) and the state before them. A period that began before `from` starts at its change if
 * known, else at `from`.
 */
export function offPeriods(opts: {
  changes: Change[];
  before: HistState | null;
  from: number;
}): OffPeriod[] {
  const out: OffPeriod[] = [];
  let open: number | null = opts.before === "off" ? opts.from : null;
  for (const c of opts.changes) {
    if (c.state === "off") open ??= c.at;
    else if (open !== null) {
      out.push({ from: open, to: c.at });
      open = null;
    }
  }
  if (open !== null) out.push({ from: open, to: null });
  return out.filter((p) => p.to === null || p.to > opts.from).reverse();
}
