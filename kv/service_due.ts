/**
 * The runner's due index of watched services. Key layout:
 *   ["service_due", due_ms, id] -> account id
 * kv/services.ts keeps one entry per service (named by `Service.due`); kv/service_lease.ts
 * moves it when a check is claimed, kv/service_results.ts when it is done; kv/hooks.ts adds nudges for heartbeats (a failure now, a
 * started run at its grace's end), which the runner takes as an early look.
 */
import type { Atomic } from "./_atomic.ts";
export const dueKey = (due: number, id: number) => ["service_due", due, id] as const;

/** A service due at `due` (an entry, or a heartbeat's nudge), in the caller's atomic. */
export function putDue(op: Atomic, due: number, id: number, account: number): Atomic {
  return op.set(dueKey(due, id), account);
}

/** Moves a service's due entry from `from` to `to`. */
export function moveDue(op: Atomic, from: number, to: number, id: number, account: number): Atomic {
  return op.delete(dueKey(from, id)).set(dueKey(to, id), account);
}

/** Deletes a service's due entry at `due`. */
export function dropDue(op: Atomic, due: number, id: number): Atomic {
  return op.delete(dueKey(due, id));
}

/** Deletes a listed due entry, checked unchanged (of several runners one wins it). */
export function dropDueEntry(op: Atomic, entry: Deno.KvEntry<number>): Atomic {
  return op.check(entry).delete(entry.key);
}

/** Due entries up to `now`, earliest first. */
export const dueRange = (now: number) => ({
  start: ["service_due"] as Deno.KvKey,
  end: ["service_due", now + 1] as Deno.KvKey,
});
