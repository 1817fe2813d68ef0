import { type Atomic, atomic, commit } from "../_atomic.ts";
import {
  type Coverage,
  covers,
  merged,
  runningUntil,
  runsWithin,
  type WindowTiming,
} from "../../lib/maintenance.ts";

/**
 * Maintenance windows of an account: while one covering a service runs, its failures alert
 * nobody (kv/alerts/alert_rules.ts holds the off alert until the window ends), its state reads
 * "maintenance" and its history leaves those stretches out of uptime. All windows of an account
 * are one record, so a change is one checked write and the runner reads them in one get.
 * Key layout:
 *   ["maintenance", account_id] -> Window[] (at most MAX_WINDOWS)
 * The rules of adding one (own services, a valid schedule) are kv/service/windows.ts's.
 */

export const MAX_WINDOWS = 20;

export interface Window extends WindowTiming, Coverage {
  id: number;
  name: string;
  created: number;
}

type Covered = { id: number; group: string; place: string | null };

const windowsKey = (account: number) => ["maintenance", account] as const;

/** Stores the account's windows (none: the record goes) in the caller's atomic. */
export function putWindows(op: Atomic, account: number, list: Window[]): Atomic {
  return list.length ? op.set(windowsKey(account), list) : op.delete(windowsKey(account));
}

export async function windowsEntry(kv: Deno.Kv, account: number) {
  return await kv.get<Window[]>(windowsKey(account));
}

export async function listWindows(kv: Deno.Kv, account: number): Promise<Window[]> {
  return (await windowsEntry(kv, account)).value ?? [];
}

/** When the maintenance covering the service now ends; null when none covers it. */
export function maintenanceUntil(windows: Window[], s: Covered, now: number): number | null {
  let until: number | null = null;
  for (const w of windows) {
    if (!covers(w, s)) continue;
    const end = runningUntil(w, now);
    if (end !== null && (until === null || end > until)) until = end;
  }
  return until;
}

/** The stretches of [from, to) in which a window covered the service, merged. */
export function quietSpans(
  windows: Window[],
  s: Covered,
  from: number,
  to: number,
): [number, number][] {
  return merged(windows.filter((w) => covers(w, s)).flatMap((w) => runsWithin(w, from, to)));
}

/**
 * A deleted service leaves the windows that name it, in the caller's atomic (the deletion's):
 * the record is checked even when no window names it, so a window added meanwhile retries the
 * deletion. A window left covering nothing at all goes too (it could not be added so).
 */
export function dropServiceInto(
  op: Atomic,
  entry: Deno.KvEntryMaybe<Window[]>,
  account: number,
  id: number,
): Atomic {
  op.check(entry);
  const list = entry.value ?? [];
  if (!list.some((w) => w.services.includes(id))) return op;
  const rest = list
    .map((w) => ({ ...w, services: w.services.filter((x) => x !== id) }))
    .filter((w) => w.services.length || w.groups.length || w.places.length);
  return putWindows(op, account, rest);
}

/** Removes the account's windows (erasure). */
export async function eraseWindows(kv: Deno.Kv, account: number): Promise<void> {
  await commit(atomic(kv).delete(windowsKey(account)));
}
