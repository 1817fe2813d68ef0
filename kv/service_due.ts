/**
 * The runner's due index of watched services. Key layout:
 *   ["service_due", due_ms, id] -> account id
 * kv/services.ts keeps one entry per service (named by `Service.due`); kv/service_lease.ts
 * moves it when a check is claimed, kv/service_results.ts when it is done; kv/hooks.ts adds
 * nudges for heartbeats (a failure now, a started run at its grace's end), which the runner
 * takes as an early look. A nudge that cannot wait for the next minute (a failure) is also
 * asked for through the KV queue (`askLook`, in the nudge's atomic): jobs/queue.ts claims it
 * as the runner would, so of the two one looks.
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

/** A look asked for through the KV queue: the nudge at `due` of service `id`. */
export interface LookAsked {
  look: { account: number; id: number; due: number };
}

/** Retries of a queued look that failed (a conflict, KV busy); the runner is there after. */
const LOOK_BACKOFF = [1_000, 5_000, 15_000];

/** Asks, in the nudge's atomic, for a look at the nudge within seconds (jobs/queue.ts). */
export function askLook(op: Atomic, look: LookAsked["look"]): Atomic {
  return op.enqueue({ look } satisfies LookAsked, { backoffSchedule: LOOK_BACKOFF });
}

/** A queued message's look, or null for anything else. */
export function lookAsked(msg: unknown): LookAsked["look"] | null {
  const look = (msg as Partial<LookAsked> | null)?.look;
  const int = (n: unknown): n is number => Number.isSafeInteger(n);
  return look && int(look.account) && int(look.id) && int(look.due) ? look : null;
}

/** The due entry of a service at `due` (a nudge), or null when taken already. */
export async function getDue(
  kv: Deno.Kv,
  due: number,
  id: number,
): Promise<Deno.KvEntry<number> | null> {
  const e = await kv.get<number>(dueKey(due, id));
  return e.versionstamp === null ? null : e as Deno.KvEntry<number>;
}
