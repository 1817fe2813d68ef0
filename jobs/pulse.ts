import { notePulse } from "../kv/service/monitor.ts";
import type { Deps } from "../lib/deps.ts";
import { errorKind, log } from "../lib/log.ts";

/**
 * Leaves this monitor's pulse (kv/service/monitor.ts): one long after the last stores the stretch
 * no process ran as a gap. A failure is logged; the run goes on (its jobs matter more). Its own
 * module, apart from jobs/watchdog.ts and the checkers that one imports: a start leaves a pulse
 * at once, and need not load what a watchdog ping sends with.
 */
export async function pulse(deps: Deps): Promise<void> {
  try {
    const gap = await notePulse(deps.kv, deps.clock.now());
    if (gap) {
      log("warn", "this monitor was not running", {
        from: new Date(gap.from).toISOString(),
        to: new Date(gap.to).toISOString(),
        minutes: Math.round((gap.to - gap.from) / 60_000),
      });
    }
  } catch (err) {
    log("error", "monitor pulse failed", { error: errorKind(err) });
  }
}
