/**
 * The one commit path. Domain code builds a write with `atomic(kv)` and commits it with
 * `commit(op)` (or returns it from a `transact` attempt), and nothing else writes: `commit`
 * runs, by name, what must follow a commit: an atomic that queued record trail lines runs the
 * trail's sequencer (kv/store/trail.ts `kickTrail`) before `commit` returns. Commits, and the reads
 * of a KV `openKv` opened, wait out a KV file that another process holds locked
 * (kv/_locked.ts), and `transact` runs optimistic loops for version-checked atomics, so
 * concurrent requests never lose an update.
 */
import { deleteInChunks, keysOf } from "./_batch.ts";
import {
  atomicStats,
  isLocked,
  lockSafe,
  type LockSafeKv,
  nextDelay,
  pause,
  retryLocked,
  TRANSACT_BUDGET_MS,
} from "./_locked.ts";
import { kickTrail, QUEUE } from "./store/trail.ts";

export { atomicStats, isLocked, keysOf, lockSafe, retryLocked, TRANSACT_BUDGET_MS };
export type { LockSafeKv };

export class ConflictError extends Error {
  constructor() {
    super("too much contention on a KV record; try again");
    this.name = "ConflictError";
  }
}

/**
 * Optimistic transaction: `attempt` reads what it needs and returns an atomic operation with
 * checks on what it read, plus the result to hand back. When the commit fails a check, the
 * whole attempt runs again with fresh reads. Returning `op: null` means nothing to write.
 *
 * Retries are bounded by time, not by a count: a burst of writers on one key resolves itself
 * when each waits a random share of a growing delay (full jitter, 1 ms doubling to 250 ms), so
 * the writers spread out instead of colliding again in lockstep.
 */
export async function transact<T>(
  attempt: () => Promise<{ op: Atomic | null; result: T }>,
  budgetMs = TRANSACT_BUDGET_MS,
): Promise<T> {
  const start = performance.now();
  let delay = 1;
  for (let i = 0;; i++) {
    const { op, result } = await attempt();
    if (op === null) return result;
    const res = await commit(op);
    if (res.ok) return result;
    if (performance.now() - start > budgetMs) {
      atomicStats.gaveUp++;
      throw new ConflictError();
    }
    atomicStats.retries++;
    // The first retry goes at once: most conflicts are one other writer, already done.
    if (i > 0) {
      await pause(delay);
      delay = nextDelay(delay);
    }
  }
}

/**
 * An atomic operation being built: Deno's, without `commit` (that is `commit(op)`). Each
 * method adds to the operation and answers it, so calls chain as on Deno's.
 */
export type Atomic = { [K in Exclude<keyof Deno.AtomicOperation, "commit">]: Chain<K> };
type Chain<K extends keyof Deno.AtomicOperation> = (
  ...args: Parameters<Deno.AtomicOperation[K]>
) => Atomic;

/** What `commit` must know of an atomic not committed yet: its KV, Deno's operation, the trail. */
interface Uncommitted {
  kv: Deno.Kv;
  op: Deno.AtomicOperation;
  /** Whether it queues record trail lines. */
  trail: boolean;
  /** Its mutations so far (sets, deletes, sums, mins, maxes, enqueues): KV takes 1 000. */
  mutations: number;
}

const uncommitted = new WeakMap<Atomic, Uncommitted>();

/** A new atomic operation on `kv`, to commit with `commit`. */
export function atomic(kv: Deno.Kv): Atomic {
  const u: Uncommitted = { kv, op: kv.atomic(), trail: false, mutations: 0 };
  const wrote = (key: Deno.KvKey) => {
    u.mutations++;
    if (key[0] === QUEUE) u.trail = true;
  };
  const counted = () => u.mutations++;
  const self: Atomic = {
    check: (...checks) => (u.op.check(...checks), self),
    set: (key, value, options) => (wrote(key), u.op.set(key, value, options), self),
    delete: (key) => (counted(), u.op.delete(key), self),
    sum: (key, n) => (counted(), u.op.sum(key, n), self),
    min: (key, n) => (counted(), u.op.min(key, n), self),
    max: (key, n) => (counted(), u.op.max(key, n), self),
    mutate: (...mutations) => {
      for (const m of mutations) {
        if (m.type === "delete") counted();
        else wrote(m.key);
      }
      u.op.mutate(...mutations);
      return self;
    },
    enqueue: (value, options) => (counted(), u.op.enqueue(value, options), self),
  };
  uncommitted.set(self, u);
  return self;
}

/** The mutations an atomic made by `atomic` holds so far (Deno KV commits at most 1 000). */
export function mutationCount(op: Atomic): number {
  const u = uncommitted.get(op);
  if (!u) throw new Error("mutationCount: not an atomic of kv/_atomic.ts atomic()");
  return u.mutations;
}

/**
 * Commits an atomic made by `atomic`, retrying a locked file, and runs what follows a commit:
 * when it queued trail lines and landed, the trail's sequencer.
 */
export async function commit(op: Atomic): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  const u = uncommitted.get(op);
  if (!u) throw new Error("commit: not an atomic of kv/_atomic.ts atomic()");
  uncommitted.delete(op);
  const res = await retryLocked(() => u.op.commit());
  if (res.ok && u.trail) await kickTrail(u.kv);
  return res;
}

/** Deletes `keys` through the commit path, 500 to an atomic; answers how many went. */
export function deleteKeys(
  kv: Deno.Kv,
  keys: Iterable<Deno.KvKey> | AsyncIterable<Deno.KvKey>,
): Promise<number> {
  return deleteInChunks(keys, () => atomic(kv), commit);
}

/** The KV at `path` (a file, made with its folder when new; a URL; ":memory:"), lock-safe. */
export async function openKv(path: string | undefined): Promise<LockSafeKv> {
  if (path && !path.startsWith("http") && path !== ":memory:") {
    const dir = path.replace(/[\\/][^\\/]*$/, "");
    if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  }
  return lockSafe(await retryLocked(() => Deno.openKv(path)));
}
