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

/** A promise that resolves `ms` milliseconds from now. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => after(ms, resolve));
}
