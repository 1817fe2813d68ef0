import { MINUTE } from "./clock.ts";
import { lastDueAtOrBefore, nextDueAfter } from "./schedule.ts";

/**
 * Maintenance windows as pure functions of time: whether one runs now (and until when), which
 * services it covers, and the stretches it took within a span (history leaves them out of
 * uptime). A window runs once (from, to) or on a cron schedule in a time zone, `minutes` long
 * from each scheduled time (the schedule's semantics are lib/schedule.ts's).
 */

export interface WindowTiming {
  /** Once: the window's start and end (ms). */
  from: number | null;
  to: number | null;
  /** On a schedule: a 5-field cron expression, its IANA time zone, the length of each run. */
  cron: string | null;
  tz: string | null;
  minutes: number | null;
  /**
   * On a schedule: when its runs were ended by hand ("End now"), oldest first. A run ends at the
   * first of them at or after its start, if that comes before its own end; the schedule's later
   * runs are whole. Absent: none.
   */
  ended?: number[];
}

export interface Coverage {
  services: number[];
  groups: string[];
  places: string[];
}

/** The longest a scheduled run may last: a week. */
export const MAX_MINUTES = 7 * 24 * 60;
/** The most runs of a schedule counted in a span (an every-minute schedule over 90 days). */
const MAX_RUNS = 5000;

/** Whether the window covers a service: named, or of a group or place it names. */
export const covers = (w: Coverage, s: { id: number; group: string; place: string | null }) =>
  w.services.includes(s.id) || w.groups.includes(s.group) ||
  (s.place !== null && w.places.includes(s.place));

/** The end of a scheduled run that starts at `start`: its length, or the end by hand first. */
function runEnd(w: WindowTiming, start: number): number {
  const end = start + w.minutes! * MINUTE;
  const cut = w.ended?.find((at) => at >= start);
  return cut !== undefined && cut < end ? cut : end;
}

/** The end of the window's run that holds `now`; null when it does not run then. */
export function runningUntil(w: WindowTiming, now: number): number | null {
  if (w.from !== null && w.to !== null) return w.from <= now && now < w.to ? w.to : null;
  if (!w.cron || !w.tz || !w.minutes) return null;
  // The latest start ends latest (an end by hand ends every earlier run too): if it does not
  // hold `now`, no earlier one does.
  const start = lastDueAtOrBefore({ cron: w.cron, tz: w.tz }, now);
  if (start === null) return null;
  const end = runEnd(w, start);
  return now < end ? end : null;
}

/** The next start strictly after `now`; null when none is left. */
export function nextStart(w: WindowTiming, now: number): number | null {
  if (w.from !== null && w.to !== null) return w.from > now ? w.from : null;
  if (!w.cron || !w.tz) return null;
  return nextDueAfter({ cron: w.cron, tz: w.tz }, now);
}

/** The stretches [start, end) of the window within [from, to), in order. */
export function runsWithin(w: WindowTiming, from: number, to: number): [number, number][] {
  if (w.from !== null && w.to !== null) {
    const a = Math.max(w.from, from);
    const b = Math.min(w.to, to);
    return a < b ? [[a, b]] : [];
  }
  if (!w.cron || !w.tz || !w.minutes) return [];
  const out: [number, number][] = [];
  let start = lastDueAtOrBefore({ cron: w.cron, tz: w.tz }, from);
  if (start === null || runEnd(w, start) <= from) {
    start = nextDueAfter({ cron: w.cron, tz: w.tz }, from);
  }
  while (start !== null && start < to && out.length < MAX_RUNS) {
    const [a, b] = [Math.max(start, from), Math.min(runEnd(w, start), to)];
    if (a < b) out.push([a, b]);
    start = nextDueAfter({ cron: w.cron, tz: w.tz }, start);
  }
  return out;
}

/** Stretches merged where they overlap or touch, sorted. */
export function merged(spans: [number, number][]): [number, number][] {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * A wall-clock time "YYYY-MM-DDTHH:MM" in an IANA time zone as ms since the epoch (a time in a
 * daylight-saving gap moves forward by the gap); null when it is not such a time.
 */
export function zonedTime(local: string, tz: string): number | null {
  const m = local.match(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/);
  if (!m) return null;
  const asUtc = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]);
  if (Number.isNaN(asUtc) || new Date(asUtc).toISOString().slice(0, 16) !== local) return null;
  // The zone's offset at the guess, applied twice to settle on the offset in force then.
  let t = asUtc;
  for (let i = 0; i < 2; i++) t = asUtc - offsetAt(t, tz);
  return t;
}

/** The zone's offset from UTC at `t`, in ms. */
function offsetAt(t: number, tz: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(t));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"));
  return wall - Math.floor(t / 1000) * 1000;
}
