/**
 * A KV file shared with another process (the owner command and the server) can answer
 * "database is locked" for a moment: writes retry it. Below the commit path (kv/_atomic.ts),
 * so that the record trail's sequencer, which that path runs, can use it too.
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
