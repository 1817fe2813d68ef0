import { DAY, isoDate } from "../lib/clock.ts";
import { type Change, dailyFigures, type DayFigures, type HistState } from "../lib/history.ts";
import { type Atomic, deleteKeys, keysOf } from "./_atomic.ts";

/**
 * A watched service's history: its state changes and its check durations, kept 90 days.
 * Key layout (owned here; written in the atomic of the result they belong to):
 *   ["service_changes", account_id, service_id, at_ms] -> {state, status}
 *   ["service_days", account_id, service_id, "YYYY-MM-DD"] -> {ms: number[]} durations of
 *                                                           that day's checks (checked kinds)
 * Both expire after KEEP_DAYS (+1 so the oldest day shown is whole). The per-day figures
 * (uptime, median, 95th percentile) are computed when read (lib/history.ts).
 */

export const KEEP_DAYS = 90;
const EXPIRE = (KEEP_DAYS + 1) * DAY;
/** Durations kept per day: a 5-minute check makes 288; manual checks add at most 60 an hour. */
const MAX_PER_DAY = 2000;

export interface StoredChange {
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
  return await kv.get<{ ms: number[] }>(dayKey(account, id, isoDate(at)));
}

/** The durations entry of a new service's first day (nothing to read). */
export const emptyDay = (
  account: number,
  id: number,
  at: number,
): Deno.KvEntryMaybe<{ ms: number[] }> => ({
  key: dayKey(account, id, isoDate(at)),
  value: null,
  versionstamp: null,
});

/** Adds a check's duration to its day, checked against the entry read by `readDay`. */
export function addDuration(
  op: Atomic,
  entry: Deno.KvEntryMaybe<{ ms: number[] }>,
  ms: number,
): void {
  const list = entry.value?.ms ?? [];
  if (list.length >= MAX_PER_DAY) return;
  op.check(entry).set(entry.key, { ms: [...list, ms] }, { expireIn: EXPIRE });
}

export interface History {
  days: DayFigures[];
  changes: { at: number; state: HistState; status: string }[];
}

/** The last KEEP_DAYS days of a service: figures per day and every change, oldest first. */
export async function readHistory(
  kv: Deno.Kv,
  account: number,
  id: number,
  now: number,
  days = KEEP_DAYS,
): Promise<History> {
  const from = Math.floor(now / DAY) * DAY - (days - 1) * DAY;
  const changes: History["changes"] = [];
  // The change in force when the window opens (if still kept), then the window's.
  let before: HistState | null = null;
  for await (
    const e of kv.list<StoredChange>({
      start: changeKey(account, id, 0),
      end: changeKey(account, id, from),
    }, { reverse: true, limit: 1 })
  ) before = e.value.state;
  for await (
    const e of kv.list<StoredChange>({
      start: changeKey(account, id, from),
      end: changeKey(account, id, now + 1),
    })
  ) changes.push({ at: e.key[3] as number, ...e.value });
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
  });
  return { days: figures, changes };
}

/** Removes a service's history (deletion, erasure). */
export async function eraseHistory(kv: Deno.Kv, account: number, id: number): Promise<void> {
  for (const prefix of ["service_changes", "service_days"]) {
    await deleteKeys(kv, keysOf(kv, { prefix: [prefix, account, id] }));
  }
}
