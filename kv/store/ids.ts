/**
 * Integer identifiers without a shared hot key. Key layout:
 *   ["ids", kind] -> Deno.KvU64, the highest id handed out for kind (a floor, see below)
 *
 * An id is `(ms since 2025-01-01) * 1024 + r`: the creation time in its high part, a random
 * 10-bit `r` below it, kept strictly increasing within a process (the next id is at least the
 * last one + 1). So ids are integers that sort roughly by creation across processes and
 * exactly within one, with 15 digits at most until 2055.
 *
 * Nothing is checked on a shared key: creating a record of one account never conflicts with
 * creating one of another. The record's own key is checked empty in the same atomic, so two
 * processes that draw the same id (same millisecond, same `r`) cannot both write it; the loser
 * retries with a fresh id. `["ids", kind]` is only raised with KV `max` (a mutation without a
 * check: concurrent writers never conflict on it) and read as a floor when choosing an id, so
 * that a process whose clock is behind, or restarted after its clock went back, still hands
 * out ids above every one given before: ids are never reused.
 */
import { type Atomic } from "../_atomic.ts";
type IdKind =
  | "account"
  | "session"
  | "journal"
  | "application"
  | "invite"
  | "service"
  | "file"
  | "request"
  | "proposal"
  | "channel"
  | "status_note"
  | "incident"
  | "maintenance"
  | "api_key";

export interface IdClaim {
  id: number;
  /** Adds the emptiness checks of the record's keys and the floor raise to the atomic. */
  apply(op: Atomic): Atomic;
}

/** 2025-01-01T00:00:00Z: ids count milliseconds from here. */
export const ID_EPOCH = Date.UTC(2025, 0, 1);
const RANDOM_BITS = 1024;

const last = new Map<IdKind, number>();

/** The id drawn at `now` with the random part `r` (0 to 1023), before the process's order. */
export function drawnId(now: number, r: number): number {
  return Math.max(0, now - ID_EPOCH) * RANDOM_BITS + r;
}

/** The next id of a kind in this process: time-based, above `floor` and the last one. */
export function nextId(kind: IdKind, floor: number, now = Date.now()): number {
  const drawn = drawnId(now, Math.floor(Math.random() * RANDOM_BITS));
  const id = Math.max(drawn, floor + 1, (last.get(kind) ?? 0) + 1);
  last.set(kind, id);
  return id;
}

/**
 * Takes an id for a record of `kind` whose own key(s) `unique(id)` gives: the claim's atomic
 * checks them empty, so a drawn id that is already in use fails the commit (and the caller's
 * `transact` draws another).
 */
export async function claimId(
  kv: Deno.Kv,
  kind: IdKind,
  unique: (id: number) => Deno.KvKey | Deno.KvKey[],
): Promise<IdClaim> {
  const floor = await kv.get<Deno.KvU64>(["ids", kind]);
  const id = nextId(kind, Number(floor.value?.value ?? 0n));
  const keys = unique(id);
  const list = (Array.isArray(keys[0]) ? keys : [keys]) as Deno.KvKey[];
  return {
    id,
    apply(op) {
      for (const key of list) op.check({ key, versionstamp: null });
      return op.max(["ids", kind], BigInt(id));
    },
  };
}
