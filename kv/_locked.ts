/**
 * A KV file shared with another process (the owner command and the server) can answer
 * "database is locked" for a moment: commits and reads wait it out. Below the commit path
 * (kv/_atomic.ts), so that the record trail's sequencer, which that path runs, can use it.
 */

import { sleep } from "../lib/timers.ts";

const LOCKED = /database is locked|SQLITE_BUSY|database table is locked/i;

export function isLocked(err: unknown): boolean {
  return err instanceof Error && LOCKED.test(err.message);
}

/** How long a write or read keeps trying before it gives up (a conflict, a locked file). */
export const TRANSACT_BUDGET_MS = 10_000;

/**
 * Counters of kv/_atomic.ts `transact` and of this module since the process started, for logs
 * and metrics: `retries` counts commits that failed a check and ran their attempt again,
 * `gaveUp` transactions that ran out of time (each answered as a ConflictError), `locked`
 * reads and commits that met another process's lock and waited (`retryLocked`). Read them;
 * only these two modules write them.
 */
export const atomicStats = { retries: 0, gaveUp: 0, locked: 0 };

/** Full jitter: a random share of a delay that doubles from 1 ms to 250 ms. */
export const pause = (delay: number) => sleep(Math.random() * delay);
export const nextDelay = (delay: number) => Math.min(delay * 2, 250);

/**
 * Runs `fn`, retrying "database is locked" (another process holds the KV file's write lock)
 * with the same patience as a version conflict in `transact`: jittered exponential backoff
 * for TRANSACT_BUDGET_MS, so a second process writing never makes this one answer 503.
 */
export async function retryLocked<T>(
  fn: () => Promise<T>,
  budgetMs = TRANSACT_BUDGET_MS,
): Promise<T> {
  const start = performance.now();
  let delay = 1;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isLocked(err) || performance.now() - start > budgetMs) throw err;
      atomicStats.locked++;
      await pause(delay);
      delay = nextDelay(delay);
    }
  }
}

type ReadOptions = { consistency?: Deno.KvConsistencyLevel };
type Keys<T extends readonly unknown[]> = readonly [...{ [K in keyof T]: Deno.KvKey }];

/**
 * The KV as kv/_atomic.ts `openKv` hands it out: its reads (`get`, `getMany`, `list`) and single
 * writes wait out another process's lock as commits do; every other method is the KV's own
 * (domain code writes through kv/_atomic.ts `atomic` and `commit`). It has every method of
 * Deno.Kv with the same signature, so it goes wherever a Deno.Kv does: the compiler checks
 * that (`satisfies`), nothing is cast.
 */
export function lockSafe(kv: Deno.Kv) {
  return {
    get: <T = unknown>(key: Deno.KvKey, options?: ReadOptions) =>
      retryLocked(() => kv.get<T>(key, options)),
    getMany: <T extends readonly unknown[]>(keys: Keys<T>, options?: ReadOptions) =>
      retryLocked(() => kv.getMany<T>(keys, options)),
    list: <T = unknown>(selector: Deno.KvListSelector, options?: Deno.KvListOptions) =>
      lockSafeList<T>(kv, selector, options),
    set: (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) =>
      retryLocked(() => kv.set(key, value, options)),
    delete: (key: Deno.KvKey) => retryLocked(() => kv.delete(key)),
    atomic: () => kv.atomic(),
    enqueue: (value: unknown, options?: Parameters<Deno.Kv["enqueue"]>[1]) =>
      kv.enqueue(value, options),
    listenQueue: (handler: Parameters<Deno.Kv["listenQueue"]>[0]) => kv.listenQueue(handler),
    watch: <T extends readonly unknown[]>(keys: Keys<T>, options?: { raw?: boolean }) =>
      kv.watch<T>(keys, options),
    close: () => kv.close(),
    commitVersionstamp: () => kv.commitVersionstamp(),
    [Symbol.dispose]: () => kv[Symbol.dispose](),
  } satisfies Deno.Kv;
}

/** What `lockSafe` answers: a Deno.Kv whose reads wait out another process's lock. */
export type LockSafeKv = ReturnType<typeof lockSafe>;

/**
 * A list that survives another process's lock: when a batch read meets it, the list goes on
 * from the last entry it gave (its cursor) after the same backoff as `retryLocked`.
 */
function lockSafeList<T>(
  raw: Deno.Kv,
  selector: Deno.KvListSelector,
  options: Deno.KvListOptions = {},
) {
  let iter = raw.list<T>(selector, options);
  let given = 0;
  let cursor = options.cursor;
  const start = performance.now();
  let delay = 1;
  const next = async (): Promise<IteratorResult<Deno.KvEntry<T>, undefined>> => {
    for (;;) {
      try {
        const r = await iter.next();
        if (!r.done) given++;
        return r;
      } catch (err) {
        if (!isLocked(err) || performance.now() - start > TRANSACT_BUDGET_MS) throw err;
        atomicStats.locked++;
        try {
          cursor = iter.cursor;
        } catch { /* nothing given since the last restart: same cursor */ }
        await pause(delay);
        delay = nextDelay(delay);
        const limit = options.limit === undefined ? undefined : options.limit - given;
        iter = raw.list<T>(selector, { ...options, cursor, limit });
      }
    }
  };
  const it: Deno.KvListIterator<T> = {
    next,
    get cursor() {
      return iter.cursor;
    },
    [Symbol.asyncIterator]: () => it,
  };
  return it;
}
