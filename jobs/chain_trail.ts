import { chainTrail } from "../kv/store/trail.ts";
import type { Deps } from "../lib/deps.ts";

/**
 * Minutely: chains trail lines still queued (their request's own run failed, or a crash came
 * between the change and its chaining). Safe next to any other sequencer.
 */
export const chainTrailJob = (deps: Deps) => chainTrail(deps.kv);
