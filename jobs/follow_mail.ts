import { runFanouts } from "../kv/followers.ts";
import type { Deps } from "../lib/deps.ts";

/**
 * Mails to status page followers that a process queued but did not finish (it stopped, or
 * two processes shared the work): kv/followers.ts `runFanout` picks up at the item's cursor.
 */
export async function followMailJob(deps: Deps): Promise<{ mailed: number }> {
  return { mailed: await runFanouts(deps) };
}
