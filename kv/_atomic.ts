/**
 * Two things every KV write needs: retries when a local KV file is busy with another process
 * (the owner command and the server share it) and optimistic loops for version-checked
 * atomics, so concurrent requests never lose an update.
 */

const LOCKED = /database is locked|SQLITE_BUSY|database table is locked/i;

export function isLocked(err: unknown): boolean {
  return err instanceof Error && LOCKED.test(err.message);
}

/** How long a write or read keeps trying before it gives up (a conflict, a locked file). */
export const TRANSACT_BUDGET_MS = 10_000;

/** Full jitter: a random share of a delay that doubles from 1 ms to 250 ms. */
const pause = (delay: number) => new Promise((r) => setTimeout(r, Math.random() * delay));
const nextDelay = (delay: number) => Math.min(delay * 2, 250);

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

export class ConflictError extends Error {
  constructor() {
    super("too much contention on a KV record; try again");
    this.name = "ConflictError";
  }
}

/**
 * Counters of `transact` since the process started, for logs and metrics: `retries` counts
 * commits that failed a check and ran their attempt again, `gaveUp` transactions that ran out
 * of time (each answered as a ConflictError), `locked` reads and commits that met another
 * process's lock and waited (`retryLocked`). Read them; only this module writes them.
 */
export const atomicStats = { retries: 0, gaveUp: 0, locked: 0 };

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
  attempt: () => Promise<{ op: Deno.AtomicOperation | null; result: T }>,
  budgetMs = TRANSACT_BUDGET_MS,
): Promise<T> {
  const start = performance.now();
  let delay = 1;
  for (let i = 0;; i++) {
    const { op, result } = await attempt();
    if (op === null) return result;
    const res = await retryLocked(() => op.commit());
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
 * Who wants to hear of writes to some keys: the session cache (kv/_auth_cache.ts) registers
 * itself here with `watchWrites` when it loads, so this wrapper knows no cache. It is told of
 * each atomic that writes a key it watches: before the commit (it may add to the atomic, as
 * the cache adds its epoch counter), with the watched keys it deletes apart, and after it,
 * whether it landed. `openedWith` tells it where a KV lives, whenever it first looks (it may
 * load after the KV was opened).
 */
export interface WriteWatcher {
  watches(key: Deno.KvKey): boolean;
  before(
    kv: Deno.Kv,
    op: Deno.AtomicOperation,
    keys: Deno.KvKey[],
    deleted: Deno.KvKey[],
  ): void;
  after(kv: Deno.Kv, keys: Deno.KvKey[], landed: boolean): void;
}

let watcher: WriteWatcher | null = null;

/** Registers the one watcher of writes. */
export function watchWrites(w: WriteWatcher): void {
  watcher = w;
}

const opened = new WeakMap<Deno.Kv, { path: string | undefined }>();

/** The path a KV was opened with by `openKv`; undefined for a KV opened otherwise. */
export function openedWith(kv: Deno.Kv): { path: string | undefined } | undefined {
  return opened.get(kv);
}

const watched = (key: Deno.KvKey) => watcher !== null && watcher.watches(key);

const RETRIED_KV = new Set<PropertyKey>(["get", "getMany", "commit"]);
const ATOMIC_MUTATIONS = new Set<PropertyKey>(["set", "delete", "sum", "min", "max"]);

/**
 * Wraps a KV so that every read and write retries a locked file, and every write to a watched
 * key (a session or account: the session cache's) goes through an atomic its watcher sees.
 */
export function lockSafe<T extends object>(target: T): T {
  const proxy: T = new Proxy(target, {
    get(t, prop, _receiver) {
      const value = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      const kv = proxy as unknown as Deno.Kv;
      const raw = t as unknown as Deno.Kv;
      if (prop === "atomic") return () => watchedAtomic(kv, raw.atomic());
      if (prop === "set" || prop === "delete") {
        return (key: Deno.KvKey, ...rest: unknown[]) => {
          if (!watched(key)) return retryLocked(() => value.apply(t, [key, ...rest]));
          // Through an atomic, so the write reaches the cache and its epoch like any other.
          const op = watchedAtomic(kv, raw.atomic());
          if (prop === "set") op.set(key, rest[0], rest[1] as { expireIn?: number });
          else op.delete(key);
          return op.commit().then((r) => prop === "set" ? r : undefined);
        };
      }
      if (prop === "list") {
        return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) =>
          lockSafeList(raw, selector, options);
      }
      if (RETRIED_KV.has(prop)) {
        return (...args: unknown[]) => retryLocked(() => value.apply(t, args));
      }
      return (...args: unknown[]) => {
        const r = value.apply(t, args);
        return r === t ? proxy : r;
      };
    },
  });
  return proxy;
}

/**
 * A list that survives another process's lock: when a batch read meets it, the list goes on
 * from the last entry it gave (its cursor) after the same backoff as `retryLocked`.
 */
function lockSafeList<T>(
  raw: Deno.Kv,
  selector: Deno.KvListSelector,
  options: Deno.KvListOptions = {},
): Deno.KvListIterator<T> {
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
  const it = {
    next,
    get cursor() {
      return iter.cursor;
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it as unknown as Deno.KvListIterator<T>;
}

type CommitHook = (kv: Deno.Kv) => Promise<void>;
const commitHooks = new Map<string, CommitHook>();

/**
 * Runs `hook` after every committed atomic (of a KV opened with `openKv`) that set a key whose
 * first part is `prefix`, before that commit returns: the record trail's sequencer chains the
 * lines a change queued (kv/trail.ts). The hook must not throw.
 */
export function onCommitOf(prefix: string, hook: CommitHook): void {
  commitHooks.set(prefix, hook);
}

/** An atomic that notes the watched keys it writes; its commit retries locks. */
function watchedAtomic(kv: Deno.Kv, op: Deno.AtomicOperation): Deno.AtomicOperation {
  const touched: Deno.KvKey[] = [];
  const deleted: Deno.KvKey[] = [];
  const hooks = new Set<CommitHook>();
  const noteHook = (key: Deno.KvKey) => {
    const hook = commitHooks.size > 0 ? commitHooks.get(key[0] as string) : undefined;
    if (hook) hooks.add(hook);
  };
  const afterCommit = async (res: Deno.KvCommitResult | Deno.KvCommitError) => {
    if (res.ok) { for (const hook of hooks) await hook(kv); }
    return res;
  };
  const proxy: Deno.AtomicOperation = new Proxy(op, {
    get(t, prop, _receiver) {
      const value = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      if (prop === "commit") {
        return async () => {
          const w = watcher;
          if (touched.length === 0 || !w) {
            return await afterCommit(await retryLocked(() => t.commit()));
          }
          // From here to the finally, the write is pending for the watcher.
          w.before(kv, t, touched, deleted);
          let res: Deno.KvCommitResult | Deno.KvCommitError | undefined;
          try {
            res = await retryLocked(() => t.commit());
          } finally {
            w.after(kv, touched, res?.ok === true);
          }
          return await afterCommit(res);
        };
      }
      return (...args: unknown[]) => {
        if (prop === "set") noteHook(args[0] as Deno.KvKey);
        if (ATOMIC_MUTATIONS.has(prop) && watched(args[0] as Deno.KvKey)) {
          touched.push(args[0] as Deno.KvKey);
          if (prop === "delete") deleted.push(args[0] as Deno.KvKey);
        } else if (prop === "mutate") {
          for (const m of args as Deno.KvMutation[]) {
            if (!watched(m.key)) continue;
            touched.push(m.key);
            if (m.type === "delete") deleted.push(m.key);
          }
        }
        const r = value.apply(t, args);
        return r === t ? proxy : r;
      };
    },
  });
  return proxy;
}

export async function openKv(path: string | undefined): Promise<Deno.Kv> {
  if (path && !path.startsWith("http") && path !== ":memory:") {
    const dir = path.replace(/[\\/][^\\/]*$/, "");
    if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  }
  const kv = lockSafe(await retryLocked(() => Deno.openKv(path)));
  opened.set(kv, { path });
  return kv;
}
