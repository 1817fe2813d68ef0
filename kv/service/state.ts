/**
 * A watched service's record and its state machine, without storage: the record type, when a
 * heartbeat turns warn and off, what its pulse says (its runs judged against the threshold and
 * the minimum duration, a pause), and the view the API and the pages show. Pure functions of
 * their inputs (kv/service/store.ts stores records, kv/service/looks.ts records looks with them).
 * The signals a heartbeat's hook heard (`Pulse`) are kv/service/heartbeats.ts's values. Holds no keys.
 */
import { DAY, HOUR, iso, isoOrNull, MINUTE, readable } from "../../lib/clock.ts";
import type { CheckState } from "../../lib/checks/mod.ts";
import { nextDueAfter, type Schedule } from "../../lib/schedule.ts";
import type { Kind } from "../../lib/targets.ts";
import type { HttpOptions } from "../../lib/checks/http_options.ts";
import { maintenanceUntil, type Window } from "./maintenance.ts";

export type State = CheckState | "wait";

export interface BeatSignal {
  at: number;
  status: string;
  /** A success's run id, when it had one (it then ends only the run of that id). */
  rid?: string;
}

export interface Start {
  at: number;
  rid: string | null;
  /**
   * When a success with a run id ended this run (kv/service/heartbeats.ts pairs them as Healthchecks does:
   * an end with another id leaves it open); absent: see `openRun`.
   */
  ended?: number;
}

/** What a heartbeat's hook heard last: success, start and failure signals. */
export interface Pulse {
  beat: BeatSignal | null;
  start: Start | null;
  failed: BeatSignal | null;
}

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
   * Heartbeats: the check's UUID in Healthchecks' sense (`/ping/<uuid>`, the Management API's
   * `uuid`), lower-case. Kept as it is: it names the check in that API, which lists it back.
   */
  code?: string;
  /** Heartbeats: the slug of `/ping/<ping key>/<slug>`; not unique (a shared one answers 409). */
  slug?: string;
  /** Heartbeats: "POST" takes POST pings only (Healthchecks' `methods`); absent: any method. */
  methods?: "POST";
  /** Heartbeats: hash of its Uptime Kuma push token (kv/service/heartbeats.ts `pushHash`), if it has one. */
  push?: string | null;
  /**
   * Last check result (checked kinds), as counted: a failure below the threshold keeps the
   * state before it ("wait" when there was none).
   */
  last: { state: State; status: string; checked: number; ms: number } | null;
  /**
   * Consecutive failed checks (checked kinds) or failed or missing runs (heartbeats) needed
   * before off (1 to 5; absent: 1).
   */
  threshold?: number;
  /**
   * Checked kinds: consecutive failed (not ok) checks up to the last one. Heartbeats: failed
   * or missing runs in a row the runner counted up to the signals in `judged` (the missing
   * runs since the last of them are counted when read).
   */
  streak?: number;
  /**
   * Heartbeats: the times of the last success and failure signals counted into `streak`
   * (0: none).
   */
  judged?: { beat: number; fail: number };
  /** Heartbeats: a run (start to success) shorter than this many seconds failed; null: none. */
  min_duration?: number | null;
  /** Heartbeats: paused since then (no alerts, no lateness); null/absent: not paused. */
  paused_at?: number | null;
  /** Heartbeats: when it was last resumed: signals before it are no longer judged. */
  resumed?: number;
  /** The unguessable token of the service's public badge (kv/status/page.ts), if made. */
  badge?: string;
  /** Alert channels (kv/alerts/channels.ts ids) alerted besides mail. */
  channels?: number[];
  /** Services of the account it depends on (kv/service/dependencies.ts): its outage may be theirs. */
  depends_on?: number[];
  /** Heartbeats: a cron schedule instead of the fixed interval (null/absent: the interval). */
  schedule?: Schedule | null;
  /**
   * Heartbeats on the fixed interval: minutes past the interval before a missing run is off
   * (Healthchecks' grace, set through its API); null/absent: one period (docs/api.md "Resources, times and text").
   */
  interval_grace?: number | null;
  /**
   * Heartbeats on the fixed interval: the exact period in seconds (60 s to 365 days, as
   * Healthchecks' `timeout`); null/absent: `interval` minutes. `interval` then holds the
   * value of the list nearest below it (`specInterval`), for its readers.
   */
  period?: number | null;
  /**
   * Heartbeats: the exact grace in seconds (60 s to 365 days), which wins over the minutes of
   * `interval_grace` and the schedule's `grace` (those then hold it rounded up to a minute).
   */
  grace_s?: number | null;
  /** Free tags (no spaces), in the order given. */
  tags?: string[];
  /** url checks: the request's options and the answer's assertions (absent: a plain GET). */
  http?: HttpOptions | null;
  /**
   * Healthchecks' `manual_resume`: a paused heartbeat stays paused when pinged (true; absent
   * reads true) or its next success or failure resumes it (false; kv/service/commands.ts
   * `resumeByPing`).
   */
  manual_resume?: boolean;
  /** The certificate last seen by a tls check and the last expiry mark alerted for it. */
  cert?: { expires: number; alerted: number | null } | null;
  /**
   * Heartbeats: the runner's last look (or the creation), at least the newest failure signal it
   * judged. A failure after it that a success closed before the next look still alerts.
   */
  looked?: number;
  /** The state the runner last saw, for off/back alerts. */
  seen: State;
  /** When `seen` last changed (kept in kv/service/history.ts as well). */
  since?: number;
  /** An "off" mail went out and no "back" mail since. */
  down_mailed: boolean;
  /** An off alert a maintenance window holds back: sent if still off when it ends. */
  held?: boolean;
  /** Hours between reminders while off after an off alert (1 to 24); null/absent: none. */
  remind?: number | null;
  /** When the last off alert or reminder went out. */
  alerted_at?: number;
  /** Time of this service's ["service_due"] entry. */
  due: number;
}

export const floorMinute = (t: number) => Math.floor(t / MINUTE) * MINUTE;
/** The first whole minute strictly after `t`: when a state that changes past `t` is seen. */
export const minuteAfter = (t: number) => Math.ceil((t + 1) / MINUTE) * MINUTE;

/** What a heartbeat's timing reads: the interval (or exact period), or a schedule, and a grace. */
type Timing = Pick<Service, "interval" | "schedule" | "interval_grace" | "period" | "grace_s">;

/** A heartbeat's period in milliseconds: its exact period, or its interval. */
export const periodMs = (s: Pick<Timing, "interval" | "period">) =>
  s.period != null ? s.period * 1000 : s.interval * MINUTE;

/**
 * Milliseconds of a heartbeat's grace: the exact one, else the schedule's or the interval's
 * minutes, else one period (docs/api.md "Resources, times and text": "off past twice the interval").
 */
function graceMs(s: Timing): number {
  if (s.grace_s != null) return s.grace_s * 1000;
  if (s.schedule) return s.schedule.grace * MINUTE;
  return s.interval_grace != null ? s.interval_grace * MINUTE : periodMs(s);
}

/** The intervals of docs/api.md "Resources, times and text" (minutes). */
export const INTERVALS = [5, 15, 60, 240, 1440] as const;

/** The interval of the list (minutes) kept for an exact period: the largest not above it (5 at least). */
export function specInterval(periodSeconds: number): number {
  const fit = INTERVALS.filter((i) => i * 60 <= periodSeconds);
  return fit.length ? fit[fit.length - 1] : INTERVALS[0];
}

/** A heartbeat's timing fields for a period in seconds: the interval of the list and, if it differs, the period. */
export function periodFields(seconds: number): { interval: number; period: number | null } {
  const interval = specInterval(seconds);
  return { interval, period: interval * 60 === seconds ? null : seconds };
}

/** A grace in seconds as the record keeps it: exact, and in whole minutes for the minutes' fields. */
export const graceMinutes = (seconds: number) => Math.ceil(seconds / 60);

/**
 * When a heartbeat that last beat at `at` turns warn and off: docs/api.md "Resources, times and text" for a fixed
 * interval (warn past one interval, off past two); for a schedule, Healthchecks' rule (late
 * past the first scheduled time after the beat, off past that plus the grace time).
 * Null: never (a schedule with no time left).
 */
export function beatLimits(
  s: Timing,
  at: number,
): { warn: number; off: number } | null {
  if (s.schedule) {
    const due = nextDueAfter(s.schedule, at);
    return due === null ? null : { warn: due, off: due + graceMs(s) };
  }
  const i = periodMs(s);
  return { warn: at + i, off: at + i + graceMs(s) };
}

/** A heartbeat's state at `now`: wait before any beat, then ok, warn (late) and off. */
export function beatState(
  beat: BeatSignal | null,
  s: Timing,
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
export function firstLook(s: Timing, now: number): number {
  const regular = floorMinute(now) + Math.max(MINUTE, Math.min(periodMs(s), DAY));
  const lim = beatLimits(s, now);
  return lim ? Math.min(regular, lim.off + 1) : regular;
}

/** Seconds a started run may take before it counts as failed: its grace (graceMs). */
export const runGrace = (s: Timing) => graceMs(s) / 1000;

/**
 * The run a start signal opened and nothing has closed since; else null. As Healthchecks pairs
 * them: any failure closes it, and a success without a run id; a success with a run id closes
 * only the run of that id (kv/service/heartbeats.ts marks it `ended`), so another run's end leaves it open.
 */
export function openRun(p: Pulse | null): Pulse["start"] {
  const start = p?.start;
  if (!start || start.ended !== undefined) return null;
  if (p.beat && p.beat.at >= start.at && p.beat.rid === undefined) return null;
  if (p.failed && p.failed.at >= start.at) return null;
  return start;
}

/** A failure signal newer than the last success, or null. */
export function openFailure(p: Pulse | null): Pulse["failed"] {
  const f = p?.failed;
  if (!f || (p.beat && p.beat.at > f.at)) return null;
  return f;
}

/** What a heartbeat's record says of how its runs are judged. */
type Judging = Pick<
  Service,
  | "interval"
  | "schedule"
  | "interval_grace"
  | "period"
  | "grace_s"
  | "threshold"
  | "streak"
  | "judged"
  | "min_duration"
  | "paused_at"
  | "resumed"
  | "looked"
>;

/**
 * The signals judged: those since the last resume. A heartbeat that had run before it counts
 * its lateness from the resume, as if it had beaten then; one that never ran still waits.
 */
function sinceResume(p: Pulse | null, s: Pick<Service, "resumed">): Pulse | null {
  const r = s.resumed;
  if (!p || r === undefined) return p;
  const keep = <T extends { at: number }>(x: T | null) => (x && x.at >= r ? x : null);
  const ran = p.beat || p.failed || p.start;
  const beat = keep(p.beat) ?? (ran ? { at: r, status: `resumed ${readable(r)}` } : null);
  return { beat, start: keep(p.start), failed: keep(p.failed) };
}

/** "2 s", "5 minutes", "3 hours": a run's length in words. */
export function spanText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} minutes` : `${Math.round(m / 60)} hours`;
}

/**
 * The last success, when it ended a run (from the latest start before it, not ended by a
 * failure) shorter than the minimum duration: the status saying so; else null. A success
 * without a start before it cannot be judged and counts as good.
 */
function shortRun(p: Pulse | null, s: Pick<Service, "min_duration">): string | null {
  const min = s.min_duration;
  const b = p?.beat;
  const st = p?.start;
  if (!min || !b || !st || st.at >= b.at) return null;
  if (p.failed && p.failed.at > st.at && p.failed.at <= b.at) return null;
  const took = b.at - st.at;
  if (took >= min * 1000) return null;
  return `run took ${spanText(took)}, less than the ${spanText(min * 1000)} it should take`;
}

/** Missing runs can be counted so far after the last run under a schedule (cron steps). */
const MISSES_COUNTED = 10;

/**
 * The missing runs after a run that ended at `at`: the k-th counts once its expected time
 * plus the grace has passed (a fixed interval's grace is one interval, so the first is "off past
 * twice the interval" of docs/api.md, "Resources, times and text"; a schedule's k-th time after
 * the run plus its grace).
 * `count` of them by `now`, and `limit(k)`, when the k-th counts (null: never).
 */
function missedRuns(
  s: Timing,
  at: number,
  now: number,
): { count: number; limit: (k: number) => number | null } {
  if (!s.schedule) {
    // The k-th counts past at + k periods + the grace (one period unless set).
    const i = periodMs(s);
    const g = graceMs(s);
    return {
      count: Math.max(0, Math.ceil((now - at - g) / i) - 1),
      limit: (k) => at + k * i + g,
    };
  }
  const sched = s.schedule;
  const limits: number[] = [];
  let t = at;
  while (limits.length < MISSES_COUNTED) {
    const due = nextDueAfter(sched, t);
    if (due === null) break;
    limits.push(due + graceMs(s));
    if (limits.at(-1)! >= now) break;
    t = due;
  }
  return {
    count: limits.filter((l) => l < now).length,
    limit: (k) => limits[k - 1] ?? null,
  };
}

/** The runs the record counted, with the ends its signals add since (failures, short runs). */
interface RunCount {
  /** Failed or missing runs in a row up to the last end. */
  streak: number;
  /** The most it reached on the way (a failure a success then closed). */
  peak: number;
  judged: { beat: number; fail: number };
}

/**
 * Adds the run ends the runner has not counted yet (the last success and failure, if newer
 * than `judged`) to the record's streak, oldest first, with the missing runs before each: a
 * failure or a short run adds one, a good success ends the streak. Records from before
 * `judged` count what their last look (`looked`) had seen as judged.
 */
function countRuns(p: Pulse | null, s: Judging): RunCount {
  const seen = s.looked ?? 0;
  const atOrBefore = (x: { at: number } | null | undefined) => (x && x.at <= seen ? x.at : 0);
  const j = s.judged ?? { beat: atOrBefore(p?.beat), fail: atOrBefore(p?.failed) };
  let streak = s.streak ?? 0;
  let peak = streak;
  // The last end counted (0: none known).
  let anchor = Math.max(j.beat, j.fail);
  const ends: { at: number; ok: boolean }[] = [];
  if (p?.beat && p.beat.at > j.beat) ends.push({ at: p.beat.at, ok: true });
  if (p?.failed && p.failed.at > j.fail) ends.push({ at: p.failed.at, ok: false });
  // A success and a failure of the same millisecond: the failure is the later (openFailure).
  ends.sort((a, b) => a.at - b.at || (a.ok ? -1 : 1));
  for (const e of ends) {
    if (anchor > 0) streak += missedRuns(s, anchor, e.at).count;
    streak = e.ok && !shortRun(p, s) ? 0 : streak + 1;
    peak = Math.max(peak, streak);
    anchor = e.at;
  }
  return {
    streak,
    peak,
    judged: {
      beat: Math.max(j.beat, p?.beat?.at ?? 0),
      fail: Math.max(j.fail, p?.failed?.at ?? 0),
    },
  };
}

/** A heartbeat judged at `now` from its signals and its record. */
export interface BeatVerdict {
  state: State;
  /** Failed or missing runs in a row now (`failed_checks`). */
  runs: number;
  paused: boolean;
  /** The signals judged (since the last resume). */
  pulse: Pulse | null;
  /** The runs to store in the record (`streak`, `judged`), and the highest streak reached. */
  count: RunCount;
  /** The last run ended shorter than its minimum: the status saying so. */
  short: string | null;
  /** When the state turned off by missing runs (the threshold's), else null. */
  offSince: number | null;
  /** When the next missing run counts, else null. */
  nextMiss: number | null;
}

/**
 * A heartbeat's state from its runs: a failure (a fail signal, or a run shorter than its
 * minimum duration), a started run past its grace and each missing run count one, and
 * `threshold` of them in a row turn it off (one: off at once after a failure, off when a
 * started run outlives its grace, off past twice the interval, as docs/api.md "Resources, times and text" has it). Below
 * the threshold a failed or missing run reads warn; otherwise ok, or warn when late
 * (beatState), wait before any run. Paused: wait, nothing counted.
 */
export function judgeBeat(p: Pulse | null, s: Judging, now: number): BeatVerdict {
  const q = sinceResume(p, s);
  const count = countRuns(q, s);
  if (s.paused_at != null) {
    const none = { runs: 0, short: null, offSince: null, nextMiss: null };
    return { state: "wait", paused: true, pulse: q, count, ...none };
  }
  const threshold = s.threshold ?? 1;
  const failure = openFailure(q);
  const short = failure ? null : shortRun(q, s);
  const failed = Math.max(count.streak, failure || short ? 1 : 0);
  const run = openRun(q);
  const over = run && now > run.at + graceMs(s) ? 1 : 0;
  const last = Math.max(q?.beat?.at ?? -Infinity, q?.failed?.at ?? -Infinity);
  const missed = Number.isFinite(last) ? missedRuns(s, last, now) : null;
  const runs = failed + Math.max(over, missed?.count ?? 0);
  // The missing run that reached the threshold, when missing runs did.
  const k = threshold - failed;
  const offSince = runs >= threshold && missed && k >= 1 && missed.count >= k && over === 0
    ? missed.limit(k)
    : null;
  const nextMiss = missed ? missed.limit(missed.count + 1) : null;
  const verdict = { runs, paused: false, pulse: q, count, short, offSince, nextMiss };
  if (runs >= threshold) return { state: "off", ...verdict };
  if (runs >= 1) return { state: "warn", ...verdict };
  if (!q?.beat) return { state: run ? "ok" : "wait", ...verdict };
  return { state: beatState(q.beat, s, now), ...verdict };
}

/**
 * When a heartbeat's next run is due, the moment after which it reads late: one period (or the
 * schedule's next time) after its last signal as judged (a success or a failure; a resume counts
 * as a success for one that had run). Before any signal it is not watched yet (it reads waiting,
 * never late): a schedule's next time still says when its job runs; on a period there is none.
 * Null while paused. The service's page and the dashboard both show this.
 */
export function nextRunDue(s: Service, pulse: Pulse | null, now: number): number | null {
  const v = judgeBeat(pulse, s, now);
  if (v.paused) return null;
  const last = Math.max(v.pulse?.beat?.at ?? -Infinity, v.pulse?.failed?.at ?? -Infinity);
  if (Number.isFinite(last)) return beatLimits(s, last)?.warn ?? null;
  return s.schedule ? nextDueAfter(s.schedule, now) : null;
}

/**
 * When the runner looks at a heartbeat next, after a look that judged it `v` (`s` the record
 * the look writes): the one place that says when a heartbeat is due. The millisecond after
 * its state would change: the last beat turning off, the next missing run counting, an open
 * run's grace ending, a holding window closing; a minute while it is off and alerted (for
 * reminders; a success asks for its own look, kv/service/heartbeats.ts), else within the hour; one interval
 * when it never beat; a day while paused. Exact, not at the next minute: the due index is
 * looked at every few seconds (jobs/checks.ts `pollDue`) and woken at this time through the
 * KV queue (kv/service/store.ts `wakeAt`), so an alert leaves within seconds of its moment. Never
 * now or before (a look would follow a look).
 */
export function nextLook(
  s: Service,
  v: BeatVerdict,
  runEnd: number | null,
  holdUntil: number | null,
  now: number,
): number {
  if (v.paused) return floorMinute(now) + DAY;
  const i = Math.min(periodMs(s), DAY);
  const beat = v.pulse?.beat ?? null;
  const lim = beat ? beatLimits(s, beat.at) : null;
  const later = floorMinute(now) + MINUTE;
  let due = v.state === "off"
    ? floorMinute(now) + (s.down_mailed ? MINUTE : Math.min(i, HOUR))
    : !beat
    ? firstLook(s, now)
    : lim
    ? (lim.off >= now ? lim.off + 1 : later)
    : floorMinute(now) + Math.max(i, HOUR);
  if (runEnd !== null && v.state !== "off") due = Math.min(due, runEnd + 1);
  if (holdUntil !== null) due = Math.min(due, minuteAfter(holdUntil));
  // The next missing run may reach the threshold.
  if (v.nextMiss !== null && v.state !== "off") due = Math.min(due, v.nextMiss + 1);
  return due > now ? due : later;
}

/**
 * A heartbeat as people see it (the pages, the APIs, the status page): judged now, but off
 * only once a look found it off, so its alert is on its way when it reads off; until that look
 * (seconds after the moment) a heartbeat its signals turn off reads late.
 */
export function shownVerdict(p: Pulse | null, s: Judging & Pick<Service, "seen">, now: number) {
  const v = judgeBeat(p, s, now);
  return v.state === "off" && s.seen !== "off" ? { ...v, state: "warn" as State } : v;
}

/** A heartbeat's state from its signals and its record (judgeBeat). */
export function pulseState(p: Pulse | null, s: Judging, now: number): State {
  return judgeBeat(p, s, now).state;
}

/** " (failed or missing run 1 of 3 before an alert)", " (3 failed or missing runs in a row)". */
export function runsNote(v: BeatVerdict, threshold: number): string {
  if (threshold <= 1 || v.runs < 1) return "";
  return v.runs < threshold
    ? ` (failed or missing run ${v.runs} of ${threshold} before an alert)`
    : ` (${v.runs} failed or missing runs in a row)`;
}

/** The status text of a heartbeat: the failure's, the run's, or the last success's. */
function pulseStatus(v: BeatVerdict, s: Service, now: number): string {
  if (v.paused) return `paused since ${readable(s.paused_at!)}`;
  const p = v.pulse;
  const f = openFailure(p);
  const run = openRun(p);
  const text = f
    ? f.status || "failure signalled"
    : run
    ? now > run.at + graceMs(s)
      ? "started, no end within the grace time"
      : "running since " + readable(run.at)
    : v.short ?? (p?.beat ? p.beat.status : "waiting for the first heartbeat");
  return text + runsNote(v, s.threshold ?? 1);
}

/**
 * The state a person sees: paused, then maintenance, before what the checks say (the service
 * list and page, the status page).
 */
export const shownState = (s: { paused: boolean; maintenance: boolean; state: State }) =>
  s.paused ? "paused" : s.maintenance ? "maintenance" : s.state;

/**
 * What the owner sees of a service. `windows`: the account's maintenance windows, read once
 * per request by the caller (listWindows), so a list costs one read, not one per service.
 */
export function serviceView(s: Service, pulse: Pulse | null, now: number, windows: Window[]) {
  const hb = s.kind === "webhook";
  const v = hb ? shownVerdict(pulse, s, now) : null;
  return {
    id: s.id,
    name: s.name,
    what: s.what,
    group: s.group,
    place: s.place,
    kind: s.kind,
    interval: s.interval,
    target_hint: s.hint,
    state: v ? v.state : s.paused_at != null ? "wait" : s.last?.state ?? "wait",
    status: v
      ? pulseStatus(v, s, now)
      : s.paused_at != null
      ? `paused since ${readable(s.paused_at)}`
      : s.last?.status ?? "not checked yet",
    checked: hb ? null : isoOrNull(s.last?.checked),
    ms: hb ? null : s.last?.ms ?? null,
    beat: hb ? isoOrNull(pulse?.beat?.at) : null,
    created: iso(s.created),
    alerts: s.alerts,
    threshold: s.threshold ?? 1,
    failed_checks: v ? v.runs : s.streak ?? 0,
    cert_expires: isoOrNull(s.cert?.expires),
    schedule: s.schedule?.cron ?? null,
    tz: s.schedule?.tz ?? null,
    grace: s.schedule?.grace ?? s.interval_grace ?? null,
    period_seconds: hb && !s.schedule ? Math.round(periodMs(s) / 1000) : null,
    grace_seconds: hb ? Math.round(graceMs(s) / 1000) : null,
    channels: s.channels ?? [],
    depends_on: s.depends_on ?? [],
    remind: s.remind ?? null,
    min_duration: s.min_duration ?? null,
    paused: s.paused_at != null,
    maintenance: maintenanceUntil(windows, s, now) !== null,
    badge_path: s.badge ? `/api/badges/${s.badge}.svg` : null,
    tags: s.tags ?? [],
    uuid: s.code ?? null,
    slug: s.slug ?? null,
    methods: hb ? s.methods ?? "" : null,
    http: s.kind === "url" ? s.http ?? null : null,
  };
}
export type ServiceView = ReturnType<typeof serviceView>;

/**
 * When a service was last heard from (ms), or null: its last check, or a heartbeat's last
 * signal, a failure included (the view's `beat` is its last success only).
 */
export function lastHeard(view: ServiceView, pulse: Pulse | null): number | null {
  if (view.kind !== "webhook") return view.checked ? Date.parse(view.checked) : null;
  return Math.max(pulse?.beat?.at ?? 0, pulse?.failed?.at ?? 0) || null;
}
