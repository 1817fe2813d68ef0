import { DAY, isoDate } from "../../lib/clock.ts";
import {
  type Change,
  dailyFigures,
  type DayFigures,
  type HistState,
  uptimeBetween,
} from "../../lib/history.ts";
import { type Atomic, deleteKeys, keysOf } from "../_atomic.ts";
import { getManyEntries } from "../_batch.ts";
import { listGaps } from "./monitor.ts";

/**
 * A watched service's history: its state changes and its check durations, kept 90 days.
 * Key layout (owned here; written in the atomic of the result they belong to):
 *   ["service_changes", account_id, service_id, at_ms] -> {state, status}
 *   ["service_days", account_id, service_id, "YYYY-MM-DD"] -> {ms: number[], at?: number[],
 *                                  st?: string} that day's checks (checked kinds): durations,
 *                                  times and results ("o" ok, "w" warn, "x" off), in order
 * Both expire after KEEP_DAYS (+1 so the oldest day shown is whole). The per-day figures
 * (uptime, median, 95th percentile) are computed when read (lib/history.ts).
 */

export const KEEP_DAYS = 90;
const EXPIRE = (KEEP_DAYS + 1) * DAY;
/** Durations kept per day: a 5-minute check makes 288; manual checks add at most 60 an hour. */
const MAX_PER_DAY = 2000;

/** A day's checks: durations, and (since the dashboard) their times and results. */
interface StoredDay {
  ms: number[];
  at?: number[];
  st?: string;
}

interface StoredChange {
  state: HistState;
  status: string;
}

const changeKey = (account: number, id: number, at: number) =>
  ["service_changes", account, id, at] as const;
const dayKey = (account: number, id: number, date: string) =>
  ["service_days", account, id, date] as const;

/** Adds a state change to the caller's atomic. */
export function recordChange(
  op: Atomic,
  account: number,
  id: number,
  at: number,
  change: StoredChange,
): void {
  op.set(changeKey(account, id, at), change, { expireIn: EXPIRE });
}

/** The durations entry of a check's day, read inside the caller's transact. */
export async function readDay(kv: Deno.Kv, account: number, id: number, at: number) {
  return await kv.get<StoredDay>(dayKey(account, id, isoDate(at)));
}

/** The durations entry of a new service's first day (nothing to read). */
export const emptyDay = (
  account: number,
  id: number,
  at: number,
): Deno.KvEntryMaybe<StoredDay> => ({
  key: dayKey(account, id, isoDate(at)),
  value: null,
  versionstamp: null,
});

const RESULT_CODES = { ok: "o", warn: "w", off: "x" } as const;
const CODE_STATES: Record<string, CheckResultState> = { o: "ok", w: "warn", x: "off" };
type CheckResultState = keyof typeof RESULT_CODES;

/**
 * Adds a check's duration, time and result to its day, checked against the entry read by
 * `readDay`. Days stored before times were kept have none: their checks count for the daily
 * figures only.
 */
export function addDuration(
  op: Atomic,
  entry: Deno.KvEntryMaybe<StoredDay>,
  ms: number,
  at: number,
  state: CheckResultState,
): void {
  const day = entry.value ?? { ms: [] };
  if (day.ms.length >= MAX_PER_DAY) return;
  const timed = !entry.value || (day.at?.length === day.ms.length);
  const next: StoredDay = timed
    ? { ms: [...day.ms, ms], at: [...(day.at ?? []), at], st: (day.st ?? "") + RESULT_CODES[state] }
    : { ms: [...day.ms, ms] };
  op.check(entry).set(entry.key, next, { expireIn: EXPIRE });
}

/** One check as the dashboard and the service's chart show it. */
interface RecentResult {
  at: number;
  state: CheckResultState;
  ms: number;
}

/** The checks of the last `span` ms (24 hours unless told; at most KEEP_DAYS), oldest first. */
export async function recentResults(
  kv: Deno.Kv,
  account: number,
  id: number,
  now: number,
  span = DAY,
): Promise<RecentResult[]> {
  const from = now - Math.min(span, KEEP_DAYS * DAY);
  const dates: string[] = [];
  for (let t = Math.floor(from / DAY) * DAY; t <= now; t += DAY) dates.push(isoDate(t));
  const entries = await getManyEntries<StoredDay>(kv, dates.map((d) => dayKey(account, id, d)));
  const out: RecentResult[] = [];
  for (const { value: day } of entries) {
    if (!day?.at || !day.st) continue;
    for (let i = 0; i < day.at.length; i++) {
      if (day.at[i] <= from || day.at[i] > now) continue;
      out.push({ at: day.at[i], state: CODE_STATES[day.st[i]] ?? "off", ms: day.ms[i] });
    }
  }
  return out;
}

/**
 * The state changes of the last `days` days and the state before them: what the uptime
 * figures are computed from (lib/history.ts uptimeBetween), without the daily durations.
 */
export async function readChanges(
  kv: Deno.Kv,
  account: number,
  id: number,
  now: number,
  days: number,
): Promise<{ before: HistState | null; changes: Change[] }> {
  const { before, changes } = await changesSince(kv, account, id, now - days * DAY, now);
  return { before, changes: changes.map(({ at, state }) => ({ at, state })) };
}

/** The change in force at `from` (if still kept), then every change in [from, to). */
export async function changesBetween(
  kv: Deno.Kv,
  account: number,
  id: number,
  from: number,
  to: number,
): Promise<{ before: HistState | null; changes: Change[] }> {
  const { before, changes } = await changesSince(kv, account, id, from, to - 1);
  return { before, changes: changes.map(({ at, state }) => ({ at, state })) };
}

/** How many checks were recorded in [from, to) (checked kinds). */
export async function countChecks(
  kv: Deno.Kv,
  account: number,
  id: number,
  from: number,
  to: number,
): Promise<number> {
  let n = 0;
  for await (
    const e of kv.list<StoredDay>({
      start: dayKey(account, id, isoDate(from)),
      end: [...dayKey(account, id, isoDate(to - 1)), ""],
    })
  ) {
    const day = e.value;
    if (day.at?.length === day.ms.length) n += day.at.filter((t) => t >= from && t < to).length;
    else n += day.ms.length;
  }
  return n;
}

/** The change in force at `from` (if still kept), then every change from `from` to `now`. */
async function changesSince(
  kv: Deno.Kv,
  account: number,
  id: number,
  from: number,
  now: number,
): Promise<{ before: HistState | null; changes: ServiceHistory["changes"] }> {
  let before: HistState | null = null;
  for await (
    const e of kv.list<StoredChange>({
      start: changeKey(account, id, 0),
      end: changeKey(account, id, from),
    }, { reverse: true, limit: 1 })
  ) before = e.value.state;
  const changes: ServiceHistory["changes"] = [];
  for await (
    const e of kv.list<StoredChange>({
      start: changeKey(account, id, from),
      end: changeKey(account, id, now + 1),
    })
  ) changes.push({ at: e.key[3] as number, ...e.value });
  return { before, changes };
}

export interface ServiceHistory {
  days: DayFigures[];
  changes: { at: number; state: HistState; status: string }[];
  /** Uptime (lib/history.ts uptimeBetween) of the last 24 hours, 7 and 30 days, all days kept. */
  uptime: { day: number | null; week: number | null; month: number | null; all: number | null };
  /** The state in force before the first change listed (null if unknown). */
  before: HistState | null;
  /** When this monitor was down within the days read (kv/service/monitor.ts): no data. */
  gaps: [number, number][];
}

/** The last KEEP_DAYS days of a service: figures per day and every change, oldest first. */
export async function readHistory(
  kv: Deno.Kv,
  account: number,
  id: number,
  now: number,
  days = KEEP_DAYS,
  quiet: [number, number][] = [],
): Promise<ServiceHistory> {
  const from = Math.floor(now / DAY) * DAY - (days - 1) * DAY;
  const [{ before, changes }, gaps] = await Promise.all([
    changesSince(kv, account, id, from, now),
    listGaps(kv, from, now),
  ]);
  const durations = new Map<string, number[]>();
  for await (
    const e of kv.list<{ ms: number[] }>({
      start: dayKey(account, id, isoDate(from)),
      end: [...dayKey(account, id, isoDate(now)), ""],
    })
  ) durations.set(e.key[3] as string, e.value.ms);
  const figures = dailyFigures({
    now,
    days,
    changes: changes.map((c): Change => ({ at: c.at, state: c.state })),
    before,
    durations,
    quiet,
    gaps,
  });
  const timed = changes.map((c): Change => ({ at: c.at, state: c.state }));
  const span = (start: number) =>
    uptimeBetween({ changes: timed, before, from: start, to: now, quiet, gaps });
  return {
    days: figures,
    changes,
    uptime: {
      day: span(now - DAY),
      week: span(now - 7 * DAY),
      month: span(now - 30 * DAY),
      all: span(from),
    },
    before,
    gaps,
  };
}

/** Removes a service's history (deletion, erasure). */
export async function eraseHistory(kv: Deno.Kv, account: number, id: number): Promise<void> {
  for (const prefix of ["service_changes", "service_days"]) {
    await deleteKeys(kv, keysOf(kv, { prefix: [prefix, account, id] }));
  }
}
