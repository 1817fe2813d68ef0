/**
 * The runner's lease on a due service: the due entries in time order, and the claim that
 * moves one to the lease's end, so of several processes on one KV exactly one looks at a
 * service. Holds no keys: the due index is kv/service_due.ts's, the record kv/services.ts's.
 */
import type { Deps } from "../lib/deps.ts";
import { atomic, commit } from "./_atomic.ts";
import { dropDue, dropDueEntry, dueRange, getDue, putDue } from "./service_due.ts";
import type { Service } from "./service_state.ts";
import { getService, putService } from "./services.ts";

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

/** Due entries, earliest first. */
export async function listDue(kv: Deno.Kv, now: number, limit: number): Promise<DueItem[]> {
  const out: DueItem[] = [];
  for await (const e of kv.list<number>(dueRange(now), { limit })) {
    out.push({ due: e.key[1] as number, id: e.key[2] as number, account: e.value, entry: e });
  }
  return out;
}

/**
 * Takes the lease on one due check: moves its due entry to the end of the lease in one
 * atomic checked against the entry, so of several runners exactly one wins. Null: someone
 * else has it, or the service is gone.
 */
export async function claimDue(deps: Deps, item: DueItem): Promise<Service | null> {
  const { kv } = deps;
  const entry = await getService(kv, item.account, item.id);
  const s = entry.value;
  if (!s || (s.due !== item.due && s.kind !== "webhook")) {
    // A stale index entry (the service moved or is gone): drop it if still unchanged.
    if (!s) await commit(dropDueEntry(atomic(kv), item.entry));
    return null;
  }
  const until = deps.clock.now() + LEASE_MS;
  const claimed = { ...s, due: until };
  const op = dropDueEntry(atomic(kv).check(entry), item.entry);
  // Another entry of a heartbeat is a nudge a signal left (kv/hooks.ts): it claims the look,
  // and the regular entry goes with it.
  if (s.due !== item.due) dropDue(op, s.due, s.id);
  putDue(op, until, s.id, s.account);
  const res = await commit(putService(op, claimed));
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
  const entry = await getDue(deps.kv, look.due, look.id);
  if (!entry) return null;
  return await claimDue(deps, { ...look, account: entry.value, entry });
}
