/**
 * The watched service as one aggregate: its record and every entry kept with it, the runner's
 * due index and lease included. Key layout:
 *   ["services", account_id, id]    -> Service
 *   ["services_by_id", id]          -> account id
 *   ["service_count", account_id]   -> KvU64, services held (the 30 limit)
 *   ["service_due", due_ms, id]     -> account id: the runner's due index and lease
 * This module is the one writer of these keys; other modules add its mutators to their atomics
 * (`insertService`, `countAdded`, `saveService`, `dropService`, `addEarlyDue`) and it keeps, by them and
 * by its own claim alone:
 * - A service held (its record) has its id entry and exactly one regular due entry,
 *   ["service_due", record.due, id], both written in the record's atomic: set by `insertService`,
 *   moved by `saveService` whenever `due` changes (the claim moves it to the lease's end),
 *   deleted by `dropService` with the record.
 * - ["service_count", account] is the number of the account's records (absent at none).
 * - A heartbeat may have more due entries, nudges, which its ping batches set blind (kv/service/heartbeats.ts
 *   through `addEarlyDue`): at a start's grace end (the millisecond after it), at the minute of a
 *   failure or of a success that changes its state (each look also asked for through the KV
 *   queue, `queueLook`, which jobs/queue.ts claims with `claimNudge`; a start's delayed to its
 *   grace end), and a millisecond past the minute of a flood of events. A nudge is an early look: its claim
 *   deletes it and moves the regular entry to the lease's end. A nudge at the regular entry's
 *   time is that entry and moves with it. A checked service (no hook) never has one. A
 *   removal cannot find its service's nudges (the index is by time) and leaves them: when one
 *   comes due, the claim finds no record and deletes it.
 * tests/service_aggregate_test.ts drives these functions at random and checks all of it.
 */
import type { Deps } from "../../lib/deps.ts";
import { type Atomic, atomic, commit } from "../_atomic.ts";
import { getManyEntries } from "../_batch.ts";
import { claimId, type IdClaim } from "../store/ids.ts";
import type { Service } from "./state.ts";

const serviceKey = (account: number, id: number) => ["services", account, id] as const;
const byIdKey = (id: number) => ["services_by_id", id] as const;
const countKey = (account: number) => ["service_count", account] as const;
export const dueKey = (due: number, id: number) => ["service_due", due, id] as const;

export async function getService(kv: Deno.Kv, account: number, id: number) {
  return await kv.get<Service>(serviceKey(account, id));
}

/** The service's record and its account's count, to check both in a removal's atomic. */
export async function serviceWithCount(kv: Deno.Kv, account: number, id: number) {
  return await kv.getMany<[Service, Deno.KvU64]>([serviceKey(account, id), countKey(account)]);
}

/** The records of an account's services, oldest first (of every account without one). */
export function serviceEntries(kv: Deno.Kv, account?: number): Deno.KvListIterator<Service> {
  return kv.list<Service>({ prefix: account === undefined ? ["services"] : ["services", account] });
}

/**
 * The id index entries (id -> account) of services, to check in another module's atomic that
 * they are still there and still the account's: only a creation or a removal writes them.
 */
export function serviceIdEntries(kv: Deno.Kv, ids: number[]): Promise<Deno.KvEntryMaybe<number>[]> {
  return getManyEntries<number>(kv, ids.map(byIdKey));
}

/** The account's service count entry, to check in the atomic that adds or rotates. */
export async function countEntry(kv: Deno.Kv, account: number) {
  return await kv.get<Deno.KvU64>(countKey(account));
}

export const countOf = (count: Deno.KvEntryMaybe<Deno.KvU64>) => Number(count.value?.value ?? 0n);

export async function countServices(kv: Deno.Kv, account: number): Promise<number> {
  return countOf(await countEntry(kv, account));
}

/** A new service's id, unique: its claim checks the id entry empty in the atomic. */
export const claimServiceId = (kv: Deno.Kv): Promise<IdClaim> => claimId(kv, "service", byIdKey);

/** `n` services more for the account, checked against the count read. */
export function countAdded(
  op: Atomic,
  count: Deno.KvEntryMaybe<Deno.KvU64>,
  account: number,
  n: number,
): Atomic {
  return op.check(count).sum(countKey(account), BigInt(n));
}

/** A new service: its record, id entry and regular due entry (its count: `countAdded`). */
export function insertService(op: Atomic, s: Service): Atomic {
  return op.set(serviceKey(s.account, s.id), s).set(byIdKey(s.id), s.account)
    .set(dueKey(s.due, s.id), s.account);
}

/** A changed record of a held service; its regular due entry moves with `due`. */
export function saveService(op: Atomic, old: Service, s: Service): Atomic {
  if (s.due !== old.due) op.delete(dueKey(old.due, s.id)).set(dueKey(s.due, s.id), s.account);
  return op.set(serviceKey(s.account, s.id), s);
}

/** A removed service: its record, id entry, regular due entry and one less in its count. */
export function dropService(op: Atomic, s: Service, count: Deno.KvEntryMaybe<Deno.KvU64>): Atomic {
  const left = Number(count.value?.value ?? 1n) - 1;
  op.check(count).delete(serviceKey(s.account, s.id)).delete(byIdKey(s.id))
    .delete(dueKey(s.due, s.id));
  return left > 0
    ? op.set(countKey(s.account), new Deno.KvU64(BigInt(left)))
    : op.delete(countKey(s.account));
}

/** A heartbeat's nudge at `due` (set blind: a ping batch checks its hook entries instead). */
export function addEarlyDue(op: Atomic, due: number, id: number, account: number): Atomic {
  return op.set(dueKey(due, id), account);
}

/**
 * The longest delay a queued message is given (KV allows 30 days); a due time further off is
 * found by the runner's polls and the minutely job instead.
 */
const MAX_DELAY = 29 * 24 * 3_600_000;

/** A wake asked for through the KV queue: the due index looked at when `wake` comes. */
interface WakeAsked {
  wake: number;
}

/**
 * Asks, in the atomic that sets a due time `at` (a look's next, an alert group's end), for the
 * due index to be looked at then (jobs/queue.ts): a process that holds no timer (Deno Deploy
 * stops idle ones) is woken at the time, not at the next minute. The process's own polls
 * (jobs/checks.ts `pollDue`) find it as soon; whichever comes first claims it.
 */
export function wakeAt(op: Atomic, at: number, now: number): Atomic {
  if (at - now > MAX_DELAY) return op;
  return op.enqueue({ wake: at } satisfies WakeAsked, {
    delay: Math.max(0, at - now),
    backoffSchedule: LOOK_BACKOFF,
  });
}

/** A queued message's wake time, or null for anything else. */
export function wakeAsked(msg: unknown): number | null {
  const wake = (msg as Partial<WakeAsked> | null)?.wake;
  return Number.isSafeInteger(wake) ? wake! : null;
}

/** A look asked for through the KV queue: the nudge at `due` of service `id`. */
interface QueuedLook {
  look: { account: number; id: number; due: number };
}

/** Retries of a queued look that failed (a conflict, KV busy); the runner is there after. */
const LOOK_BACKOFF = [1_000, 5_000, 15_000];

/**
 * Asks, in the nudge's atomic, for a look at the nudge within seconds (jobs/queue.ts), or
 * `delay` ms from now (a run's grace end).
 */
export function queueLook(op: Atomic, look: QueuedLook["look"], delay = 0): Atomic {
  return op.enqueue({ look } satisfies QueuedLook, {
    backoffSchedule: LOOK_BACKOFF,
    ...(delay > 0 ? { delay: Math.min(delay, MAX_DELAY) } : {}),
  });
}

/** A queued message's look, or null for anything else. */
export function queuedLook(msg: unknown): QueuedLook["look"] | null {
  const look = (msg as Partial<QueuedLook> | null)?.look;
  const int = (n: unknown): n is number => Number.isSafeInteger(n);
  return look && int(look.account) && int(look.id) && int(look.due) ? look : null;
}

/**
 * A claimed check is run again by anyone after this, should its process die: longer than a
 * check may take (10 s, plus resolving and recording), short enough that a look a crash cut
 * is done again within a minute of the restart (jobs/mod.ts RESUME_AFTER_MS).
 */
export const LEASE_MS = 40_000;

export interface DueItem {
  id: number;
  account: number;
  due: number;
  entry: Deno.KvEntry<number>;
}

/** Due entries up to `now`, earliest first. */
export async function listDue(kv: Deno.Kv, now: number, limit: number): Promise<DueItem[]> {
  const out: DueItem[] = [];
  const range = { start: ["service_due"], end: ["service_due", now + 1] };
  for await (const e of kv.list<number>(range, { limit })) {
    out.push({ due: e.key[1] as number, id: e.key[2] as number, account: e.value, entry: e });
  }
  return out;
}

/**
 * Takes the lease on one due check: moves its due entry to the end of the lease in one
 * atomic checked against the entry, so of several runners (and the queue's listener) exactly
 * one wins. Null: someone else has it, or the service is gone.
 */
export async function claimDue(deps: Deps, item: DueItem): Promise<Service | null> {
  const { kv } = deps;
  const entry = await getService(kv, item.account, item.id);
  const s = entry.value;
  if (!s || (s.due !== item.due && s.kind !== "webhook")) {
    // A stale index entry (the service moved or is gone): drop it if still unchanged.
    if (!s) await commit(atomic(kv).check(item.entry).delete(item.entry.key));
    return null;
  }
  const until = deps.clock.now() + LEASE_MS;
  const claimed = { ...s, due: until };
  const op = atomic(kv).check(entry, item.entry);
  // Another entry of a heartbeat is a nudge: it claims the look and goes; the regular entry
  // moves with the record to the lease's end.
  if (item.due !== s.due) op.delete(item.entry.key);
  const res = await commit(saveService(op, s, claimed));
  return res.ok ? claimed : null;
}

/**
 * Takes the lease on a heartbeat's nudge asked for through the KV queue (a failure): the
 * same claim as the runner's, so of the two exactly one looks. Null: taken already.
 */
export async function claimNudge(
  deps: Deps,
  look: { account: number; id: number; due: number },
): Promise<Service | null> {
  const e = await deps.kv.get<number>(dueKey(look.due, look.id));
  if (e.versionstamp === null) return null;
  return await claimDue(deps, { ...look, account: e.value!, entry: e as Deno.KvEntry<number> });
}
