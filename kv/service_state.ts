/**
 * A watched service's record and its state machine, without storage: the record type, when a
 * heartbeat turns warn and off, what its pulse says, and the view the API and the pages show.
 * Pure functions of their inputs (kv/services.ts stores records and records results with them).
 * Holds no keys.
 */
import { iso, isoOrNull, MINUTE } from "../lib/clock.ts";
import type { CheckState } from "../lib/checks/mod.ts";
import { nextDueAfter, type Schedule } from "../lib/schedule.ts";
import type { Kind } from "../lib/targets.ts";
import type { Beat, Pulse } from "./hooks.ts";

export type State = CheckState | "wait";

export interface Service {
  id: number;
  account: number;
  name: string;
  what: string;
  group: string;
  place: string | null;
  kind: Kind;
  interval: number;
  /** Canonical check string (`webhook:` for heartbeats). */
  check: string;
  hint: string | null;
  alerts: boolean;
  created: number;
  /** Hash of the heartbeat key. */
  hook: string | null;
  /**
   * Last check result (checked kinds), as counted: a failure below the threshold keeps the
   * state before it ("wait" when there was none).
   */
  last: { state: State; status: string; checked: number; ms: number } | null;
  /** Consecutive failed checks needed before warn or off (1 to 5; absent: 1). */
  threshold?: number;
  /** Consecutive failed (not ok) checks up to the last one. */
  streak?: number;
  /** The unguessable token of the service's public badge (kv/status_page.ts), if made. */
  badge?: string;
  /** Alert channels (kv/channels.ts ids) alerted besides mail. */
  channels?: number[];
  /** Heartbeats: a cron schedule instead of the fixed interval (null/absent: the interval). */
  schedule?: Schedule | null;
  /** The certificate last seen by a tls check and the last expiry mark alerted for it. */
  cert?: { expires: number; alerted: number | null } | null;
  /**
   * Heartbeats: the runner's last look (or the creation), at least the newest failure signal it
   * judged. A failure after it that a success closed before the next look still alerts.
   */
  looked?: number;
  /** The state the runner last saw, for off/back alerts. */
  seen: State;
  /** When `seen` last changed (kept in kv/history.ts as well). */
  since?: number;
  /** An "off" mail went out and no "back" mail since. */
  down_mailed: boolean;
  /** Time of this service's ["service_due"] entry. */
  due: number;
}

export const floorMinute = (t: number) => Math.floor(t / MINUTE) * MINUTE;
/** The first whole minute strictly after `t`: when a state that changes past `t` is seen. */
export const minuteAfter = (t: number) => Math.ceil((t + 1) / MINUTE) * MINUTE;

/**
 * When a heartbeat that last beat at `at` turns warn and off: SPEC.md section 3 for a fixed
 * interval (warn past one interval, off past two); for a schedule, Healthchecks' rule (late
 * past the first scheduled time after the beat, off past that plus the grace time).
 * Null: never (a schedule with no time left).
 */
export function beatLimits(
  s: Pick<Service, "interval" | "schedule">,
  at: number,
): { warn: number; off: number } | null {
  if (s.schedule) {
    const due = nextDueAfter(s.schedule, at);
    return due === null ? null : { warn: due, off: due + s.schedule.grace * MINUTE };
  }
  const i = s.interval * MINUTE;
  return { warn: at + i, off: at + 2 * i };
}

/** A heartbeat's state at `now`: wait before any beat, then ok, warn (late) and off. */
export function beatState(
  beat: Beat | null,
  s: Pick<Service, "interval" | "schedule">,
  now: number,
): State {
  if (!beat) return "wait";
  const lim = beatLimits(s, beat.at);
  if (!lim || now <= lim.warn) return "ok";
  if (now <= lim.off) return "warn";
  return "off";
}

/**
 * The runner's next look at a heartbeat that has not beaten yet: one interval on, or sooner
 * when a beat right after `now` could turn it off before that (a schedule whose next time plus
 * grace is nearer). Whenever its first beat comes, the runner then looks before that beat
 * could turn off, or within the minute after.
 */
export function firstLook(s: Pick<Service, "interval" | "schedule">, now: number): number {
  const regular = floorMinute(now) + s.interval * MINUTE;
  const lim = beatLimits(s, now);
  return lim ? Math.min(regular, minuteAfter(lim.off)) : regular;
}

/** Minutes a started run may take before it counts as failed: the grace, or the interval. */
export const runGrace = (s: Pick<Service, "interval" | "schedule">) =>
  s.schedule?.grace ?? s.interval;

/** The run a start signal opened and no success or failure has closed since; else null. */
export function openRun(p: Pulse | null): Pulse["start"] {
  const start = p?.start;
  if (!start) return null;
  if (p.beat && p.beat.at >= start.at) return null;
  if (p.failed && p.failed.at >= start.at) return null;
  return start;
}

/** A failure signal newer than the last success, or null. */
export function openFailure(p: Pulse | null): Pulse["failed"] {
  const f = p?.failed;
  if (!f || (p.beat && p.beat.at > f.at)) return null;
  return f;
}

/**
 * A heartbeat's state from its signals: off at once after a failure (until a success), off
 * when a started run outlives its grace, otherwise by the last success (beatState).
 */
export function pulseState(
  p: Pulse | null,
  s: Pick<Service, "interval" | "schedule">,
  now: number,
): State {
  if (openFailure(p)) return "off";
  const run = openRun(p);
  if (run && now > run.at + runGrace(s) * MINUTE) return "off";
  if (!p?.beat) return run ? "ok" : "wait";
  return beatState(p.beat, s, now);
}

/** The status text of a heartbeat: the failure's, the run's, or the last success's. */
function pulseStatus(p: Pulse | null, s: Service, now: number): string {
  const f = openFailure(p);
  if (f) return f.status || "failure signalled";
  const run = openRun(p);
  if (run) {
    return now > run.at + runGrace(s) * MINUTE
      ? "started, no end within the grace time"
      : "running since " + iso(run.at);
  }
  return p?.beat ? p.beat.status : "waiting for the first heartbeat";
}

export function serviceView(s: Service, pulse: Pulse | null, now: number) {
  const hb = s.kind === "webhook";
  return {
    id: s.id,
    name: s.name,
    what: s.what,
    group: s.group,
    place: s.place,
    kind: s.kind,
    interval: s.interval,
    target_hint: s.hint,
    state: hb ? pulseState(pulse, s, now) : s.last?.state ?? "wait",
    status: hb ? pulseStatus(pulse, s, now) : s.last?.status ?? "not checked yet",
    checked: hb ? null : isoOrNull(s.last?.checked),
    ms: hb ? null : s.last?.ms ?? null,
    beat: hb ? isoOrNull(pulse?.beat?.at) : null,
    created: iso(s.created),
    alerts: s.alerts,
    threshold: s.threshold ?? 1,
    failed_checks: hb ? 0 : s.streak ?? 0,
    cert_expires: isoOrNull(s.cert?.expires),
    schedule: s.schedule?.cron ?? null,
    tz: s.schedule?.tz ?? null,
    grace: s.schedule?.grace ?? null,
    channels: s.channels ?? [],
    badge_path: s.badge ? `/api/badges/${s.badge}.svg` : null,
  };
}
export type ServiceView = ReturnType<typeof serviceView>;
