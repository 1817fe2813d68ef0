import { Cron } from "croner";
import { isCronLine, nextOnCalendar, OnCalendarError, parseOnCalendar } from "./oncalendar.ts";

/**
 * Cron schedules of heartbeats, with Healthchecks' semantics: a run is due at each
 * scheduled time and late after the grace time. Parsing is croner's (5 fields: minute, hour,
 * day of month, month, day of week; names, ranges, steps and `L`; day of month and day of
 * week combine with OR as in classic cron); times are computed in the schedule's IANA time
 * zone, so a daylight-saving change moves them as a crontab on a machine in that zone would
 * (croner runs a fixed time that falls into a gap at the first valid time after it, and a
 * fixed time that occurs twice once). A schedule that is not one line of five fields is a systemd
 * OnCalendar expression (one or more, one a line), as Healthchecks tells them apart, evaluated
 * by lib/oncalendar.ts.
 */

export interface Schedule {
  cron: string;
  tz: string;
  /** Minutes after a scheduled time before a missing run counts as off. */
  grace: number;
}

export const MAX_CRON = 100;
export const GRACE_MIN = 1;
export const GRACE_MAX = 7 * 24 * 60;

/**
 * The expression as croner's schedule, made for each use: keeping it made no difference
 * (bench/caches.ts: croner's `nextRun` is nearly the whole cost of a call).
 */
function cronOf(cron: string, tz: string): Cron {
  return new Cron(cron, { timezone: tz, paused: true, mode: "5-part" });
}

/** A known IANA time zone name (croner itself accepts unknown ones silently). */
export function validTimeZone(tz: string): boolean {
  if (tz.length === 0 || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const EXAMPLE = "for example 0 2 * * 0 is 02:00 every Sunday";

/** Why an OnCalendar schedule is refused, in plain words; null when it is valid. */
function onCalendarError(s: string, tz: string): string | null {
  try {
    parseOnCalendar(s);
  } catch (err) {
    if (!(err instanceof OnCalendarError)) throw err;
    return `not a cron line of five fields, nor an OnCalendar expression (${err.message.toLowerCase()}); for example 0 2 * * 0, or Sun 02:00`;
  }
  if (nextOnCalendar(s, tz, Date.UTC(2000, 0, 1)) === null) return "never comes due";
  return null;
}

/**
 * Why a schedule is refused, in plain words; null when it is valid. `onCalendar`: a schedule
 * that is not a cron line is read as OnCalendar (heartbeats); else it must be a cron line.
 */
export function cronError(cron: string, tz = "UTC", onCalendar = false): string | null {
  const s = cron.trim();
  if (s.length === 0) return "must not be empty";
  if (s.length > MAX_CRON) return `at most ${MAX_CRON} characters`;
  if (onCalendar && !isCronLine(s)) return onCalendarError(s, tz);
  if (s.split(/\s+/).length !== 5) {
    return `write five fields: minute, hour, day, month and weekday; ${EXAMPLE}`;
  }
  try {
    const c = cronOf(s, tz);
    // A pattern that never fires (e.g. 30 February) is no schedule.
    if (!c.nextRun(new Date(0))) return "never comes due: choose days that exist, such as 1-28";
    return null;
  } catch {
    // croner's own words name its internals ("Invalid value for minute: 61"): a person reads
    // the ranges instead.
    return "a field cannot be read (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday " +
      `0-6 with 0 for Sunday); ${EXAMPLE}`;
  }
}

/** The first scheduled time strictly after `after` (ms), or null if none. */
export function nextDueAfter(s: Pick<Schedule, "cron" | "tz">, after: number): number | null {
  if (!isCronLine(s.cron)) return nextOnCalendar(s.cron, s.tz, after);
  const next = cronOf(s.cron.trim(), s.tz).nextRun(new Date(after));
  return next ? next.getTime() : null;
}

/** The last scheduled time at or before `at` (ms), or null if none. */
export function lastDueAtOrBefore(s: Pick<Schedule, "cron" | "tz">, at: number): number | null {
  const prev = cronOf(s.cron.trim(), s.tz).previousRuns(1, new Date(at + 1));
  return prev.length ? prev[0].getTime() : null;
}
