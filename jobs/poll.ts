import { listDueGroups } from "../kv/alerts/alert_groups.ts";
import { listDue } from "../kv/service/store.ts";
import type { Deps } from "../lib/deps.ts";

/** The runner, once a poll found something due: from then on each poll goes to it at once. */
let runner: typeof import("./checks.ts") | null = null;

/**
 * The runner's pass between minutes, as main.ts calls it every POLL_MS (jobs/checks.ts
 * `pollDue`). Until the runner is loaded, a look at the two due indexes comes first (a service's
 * look, an alert group's end), and the runner is imported only when one holds something due: a
 * process with nothing due does not load the runner, the checkers and the alert paths they lead
 * to. Once loaded it runs every poll, reading the indexes itself, so they are not read twice.
 */
export async function pollWhenDue(deps: Deps): Promise<void> {
  if (!runner) {
    const now = deps.clock.now();
    const [due, groups] = await Promise.all([
      listDue(deps.kv, now, 1),
      listDueGroups(deps.kv, now, 1),
    ]);
    if (!due.length && !groups.length) return;
    runner = await import("./checks.ts");
  }
  await runner.pollDue(deps);
}
