import { claimNudge, queuedLook, wakeAsked } from "../kv/service/store.ts";
import { reviewHeartbeat } from "../kv/service/looks.ts";
import type { Deps } from "../lib/deps.ts";
import { log } from "../lib/log.ts";
import { count } from "../lib/metrics.ts";
import { pollDue } from "./checks.ts";

/**
 * The KV queue's messages (main.ts listens): a look a ping asked for (a failure, a success
 * that changes the state, a run's grace end: kv/service/heartbeats.ts), taken with the runner's claim and
 * done as the runner does it, so its alert is on its way within seconds of its moment; and a
 * wake at a due time (kv/service/store.ts `wakeAt`), which looks at the due index as the process's
 * own polls do. A message that throws is delivered again (at least once, with the backoff it
 * was queued with); the nudge it names stays due for the runner until one of them claims it.
 */
export async function handleQueued(deps: Deps, msg: unknown): Promise<void> {
  if (wakeAsked(msg) !== null) return await pollDue(deps);
  const look = queuedLook(msg);
  if (!look) {
    log("warn", "unknown queue message");
    return;
  }
  const t0 = performance.now();
  const claimed = await claimNudge(deps, look);
  count("catalogue_queued_looks_total", `outcome="${claimed ? "looked" : "taken"}"`);
  // No trim: the runner's looks trim (a flood nudges one of them, kv/service/heartbeats.ts).
  if (claimed) await reviewHeartbeat(deps, claimed, false);
  log("info", "queued look", { looked: claimed ? 1 : 0, ms: Math.round(performance.now() - t0) });
}
