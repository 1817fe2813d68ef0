/**
 * Two things every KV write needs: retries when a local KV file is busy with another process
 * (the owner command and the server share it) and optimistic loops for version-checked
 * atomics, so concurrent requests never lose an update.
 */

const LOCKED = /database is locked|SQLITE_BUSY|database table is locked/i;

export function isLocked(err: unknown): boolean {
  return err instanceof Error && LOCKED.test(err.message);
}

/** Runs `fn`, retrying "database is locked" with exponential backoff for about 10 s. */
export async function retryLocked<T>(fn: () => Promise<T>): Promise<T> {
  let delay = 5;
  for (let attempt = 0;; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isLocked(err) || attempt >= 12) throw err;
      await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
      delay = Math.min(delay * 2, 1000);
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
 * Optimistic transaction: `attempt` reads what it needs and returns an atomic operation with
 * checks on what it read, plus the result to hand back. When the commit fails a check, the
 * whole attempt runs again with fresh reads. Returning `op: null` means nothing to write.
 */
export async function transact<T>(
  attempt: () => Promise<{ op: Deno.AtomicOperation | null; result: T }>,
  maxAttempts = 40,
): Promise<T> {
  for (let i = 0; i < maxAttempts; i++) {
    const { op, result } = await attempt();
    if (op === null) return result;
    const res = await retryLocked(() => op.commit());
    if (res.ok) return result;
    if (i > 3) await new Promise((r) => setTimeout(r, Math.random() * 2 * i));
  }
  throw new ConflictError();
}

// An atomic's check/set/delete only queue work (and answer the operation itself); only its
// commit touches the file.
const RETRIED_KV = new Set(["get", "getMany", "set", "delete", "commit"]);
const RETRIED_ATOMIC = new Set(["commit"]);

/** Wraps a KV (and the atomics it makes) so that every read and write retries a locked file. */
export function lockSafe<T extends object>(target: T, retried = RETRIED_KV): T {
  const proxy: T = new Proxy(target, {
    get(t, prop, _receiver) {
      const value = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      if (retried.has(String(prop))) {
        return (...args: unknown[]) => retryLocked(() => value.apply(t, args));
      }
      if (prop === "atomic") return () => lockSafe(value.apply(t, []), RETRIED_ATOMIC);
      return (...args: unknown[]) => {
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
  const kv = await retryLocked(() => Deno.openKv(path));
  return lockSafe(kv);
}
