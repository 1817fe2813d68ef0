import { sweepRateWindows } from "../kv/store/rate_limit.ts";
import type { Deps } from "../lib/deps.ts";

/** Minutely: deletes rate counters of windows that have ended. */
export const sweepRatesJob = (deps: Deps) => sweepRateWindows(deps.kv, deps.clock.now());
