/**
 * Timers for the paths a server takes before its first answer and while idle (the start, the
 * log's flush, the due poll, healthz). Deno's global `setTimeout` and `setInterval` evaluate
 * the runtime's Node timer layer on their first call: it delays a start's first answer and stays
 * in memory (docs/performance.md, "Figures behind choices"). `AbortSignal.timeout` runs on the
 * runtime's own timers, without that layer. A cancelled timer keeps the process alive no longer:
 * its signal holds the event loop only while it has a listener. tests/layout_test.ts keeps the
 * globals out of the start's and the idle poll's modules.
 *
 * @example
 * ```ts
 * const flush = after(20, () => console.log("flushed"));
 * flush.cancel(); // never runs
 * ```
 */

/** A timer that can be stopped before it runs (again). */
export interface Timer {
  cancel(): void;
}

/** Calls `fn` once, `ms` milliseconds from now, unless cancelled first. */
export function after(ms: number, fn: () => void): Timer {
  const signal = AbortSignal.timeout(Math.max(0, Math.floor(ms)));
  const run = () => fn();
  signal.addEventListener("abort", run, { once: true });
  return { cancel: () => signal.removeEventListener("abort", run) };
}

/** Calls `fn` every `ms` milliseconds (each wait counted from the previous call) until cancelled. */
export function every(ms: number, fn: () => void): Timer {
  let next = after(ms, tick);
  let cancelled = false;
  function tick() {
    if (cancelled) return;
    next = after(ms, tick);
    fn();
  }
  return {
    cancel: () => {
      cancelled = true;
      next.cancel();
    },
  };
}

/**
 * A time limit for many waits at once: `within(work)` answers what `work` gives, or rejects
 * when it has taken `ms` (at most a quarter second more). One timer checks every wait in
 * flight, and only while some wait: a limit per request would make a timer per request, and
 * each fires later whether cancelled or not (an AbortSignal's timeout is not stopped by removing
 * its listener), so a busy health check would pay for thousands of timers a second.
 *
 * @example
 * ```ts
 * const within = deadline(3000);
 * const rows = await within(readRows()); // rejects if readRows takes 3 s
 * ```
 */
export function deadline(ms: number): <T>(work: Promise<T>) => Promise<T> {
  const waiting = new Map<(err: Error) => void, number>();
  let ticking = false;
  const tick = () => {
    const now = performance.now();
    for (const [reject, since] of waiting) {
      if (now - since >= ms) reject(new Error(`no answer within ${ms} ms`));
    }
    ticking = waiting.size > 0;
    if (ticking) after(CHECK_MS, tick);
  };
  return async <T>(work: Promise<T>): Promise<T> => {
    let reject!: (err: Error) => void;
    const late = new Promise<never>((_, no) => reject = no);
    waiting.set(reject, performance.now());
    if (!ticking) {
      ticking = true;
      after(Math.min(ms, CHECK_MS), tick);
    }
    try {
      return await Promise.race([work, late]);
    } finally {
      waiting.delete(reject);
    }
  };
}

/** How often `deadline` looks at the waits in flight. */
const CHECK_MS = 250;

/** A promise that resolves `ms` milliseconds from now. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => after(ms, resolve));
}
