import { listDueGroups } from "../kv/alerts/alert_groups.ts";
import { listDue } from "../kv/service/store.ts";
import type { Deps } from "../lib/deps.ts";

/**
 * The runner's pass between minutes, as main.ts calls it every POLL_MS (jobs/checks.ts
 * `pollDue`): a look at the two due indexes first (a service's look, an alert group's end), and
 * the runner only when one holds something due. A process with nothing due does not load the
 * runner, the checkers and the alert paths they lead to; the first due item loads them, within
 * the poll that finds it.
 */
export async function pollWhenDue(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  const [due, groups] = await Promise.all([
    listDue(deps.kv, now, 1),
    listDueGroups(deps.kv, now, 1),
  ]);
  if (!due.length && !groups.length) return;
  const { pollDue } = await import("./checks.ts");
  await pollDue(deps);
}
