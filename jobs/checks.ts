import { getAccount, isOwner } from "../kv/accounts/accounts.ts";
import { claimDue, type DueItem, listDue } from "../kv/service/store.ts";
import { sendDueGroups } from "../kv/alerts/grouped_alerts.ts";
import { skipPaused } from "../kv/service/commands.ts";
import { recordResult, reviewHeartbeat } from "../kv/service/looks.ts";
import { MINUTE } from "../lib/clock.ts";
import { runCheck } from "../lib/checks/mod.ts";
import type { Deps } from "../lib/deps.ts";
import { errorKind, log } from "../lib/log.ts";
import { count } from "../lib/metrics.ts";

/**
 * Minutely: runs the due checks (docs/api.md "Limits": at most three at a time). Due services
 * come from the ["service_due"] index, earliest first; each is claimed with a KV lease
 * right before it runs, so several processes on one KV run it once, and one that overruns
 * its minute is not started again. Work left when the minute's budget is spent stays due
 * for the next run. Heartbeats pass through the same index: the runner derives their state
 * for off/back alerts. After the checks, the alert groups whose two minutes are over go out
 * (kv/alerts/grouped_alerts.ts): their own time-ordered index, so the work follows what is due.
 */

const POOL_SIZE = 3;
/** Stop claiming new checks after this, so one run ends within its minute. */
const BUDGET_MS = 45_000;
const MAX_LISTED = 10_000;

interface Pool {
  active: number;
  waiting: (() => void)[];
  queued: Set<number>;
}

/** One pool per KV handle: overlapping runs in a process share the three slots. */
const pools = new WeakMap<Deno.Kv, Pool>();

function poolOf(kv: Deno.Kv): Pool {
  let p = pools.get(kv);
  if (!p) pools.set(kv, p = { active: 0, waiting: [], queued: new Set() });
  return p;
}

async function slot<T>(pool: Pool, fn: () => Promise<T>): Promise<T> {
  if (pool.active >= POOL_SIZE) await new Promise<void>((r) => pool.waiting.push(r));
  else pool.active++;
  try {
    return await fn();
  } finally {
    const next = pool.waiting.shift();
    if (next) next(); // hands its slot over: active stays the same
    else pool.active--;
  }
}

/** The next due time: one interval after the scheduled one, never in the past. */
export function nextDue(scheduled: number, intervalMin: number, now: number): number {
  const i = intervalMin * MINUTE;
  const next = scheduled + i;
  return next > now ? next : Math.floor(now / MINUTE) * MINUTE + i;
}

async function runOne(deps: Deps, item: DueItem, report: RunReport): Promise<boolean> {
  const claimed = await claimDue(deps, item);
  if (!claimed) return false;
  if (claimed.kind === "webhook") {
    await reviewHeartbeat(deps, claimed);
    report.heartbeats_reviewed++;
    return true;
  }
  if (claimed.paused_at != null) {
    await skipPaused(deps, claimed.account, claimed.id);
    return true;
  }
  // The account's standing now decides whether a private target is still allowed.
  const account = (await getAccount(deps.kv, claimed.account)).value;
  const result = await runCheck(
    deps,
    claimed.check,
    account ? isOwner(account) : false,
    undefined,
    claimed.http ?? undefined,
  );
  await recordResult(
    deps,
    claimed.account,
    claimed.id,
    result,
    (s) => nextDue(item.due, s.interval, deps.clock.now()),
  );
  report[result.state] = (report[result.state] ?? 0) + 1;
  count("catalogue_checks_total", `kind="${claimed.kind}",outcome="${result.state}"`);
  return true;
}

/**
 * What a run did: due items, those run, heartbeats looked at, checks by resulting state (and
 * `groups_sent`, alert groups sent, when there were any).
 */
interface RunReport {
  due: number;
  ran: number;
  heartbeats_reviewed: number;
  errors: number;
  [state: string]: number;
}

export async function runDueChecks(
  deps: Deps,
  opts: { budgetMs?: number } = {},
): Promise<RunReport> {
  const started = performance.now();
  const budget = opts.budgetMs ?? BUDGET_MS;
  const pool = poolOf(deps.kv);
  const items = await listDue(deps.kv, deps.clock.now(), MAX_LISTED);
  const report: RunReport = { due: items.length, ran: 0, heartbeats_reviewed: 0, errors: 0 };
  await Promise.all(items.map(async (item) => {
    if (pool.queued.has(item.id)) return;
    pool.queued.add(item.id);
    try {
      await slot(pool, async () => {
        if (performance.now() - started > budget) return;
        try {
          if (await runOne(deps, item, report)) report.ran++;
        } catch (err) {
          report.errors++;
          log("error", "check runner failed", { error: errorKind(err) });
        }
      });
    } finally {
      pool.queued.delete(item.id);
    }
  }));
  // After the checks, so the alerts they queued join their group before it goes.
  try {
    const sent = await sendDueGroups(deps);
    if (sent) report.groups_sent = sent;
  } catch (err) {
    report.errors++;
    log("error", "alert groups failed", { error: errorKind(err) });
  }
  return report;
}

export const checksJob = (deps: Deps) => runDueChecks(deps);

/** How often a process looks at the due index between the minutely runs (main.ts). */
export const POLL_MS = 2_000;

/** Per KV handle: a poll under way, and whether another was asked for meanwhile. */
const polls = new WeakMap<Deno.Kv, { busy: boolean; again: boolean }>();

/**
 * The runner's pass between minutes: every POLL_MS (main.ts) and at each queued wake
 * (jobs/queue.ts), so what comes due (a heartbeat's deadline, a run's grace end, an alert
 * group's end) is looked at within seconds of its time, not at the next minute. One pass at a
 * time per process; one asked for meanwhile runs once after it. Logged as the checks job when
 * it did something.
 */
export async function pollDue(deps: Deps): Promise<void> {
  let st = polls.get(deps.kv);
  if (!st) polls.set(deps.kv, st = { busy: false, again: false });
  if (st.busy) {
    st.again = true;
    return;
  }
  st.busy = true;
  try {
    do {
      st.again = false;
      const t0 = performance.now();
      const report = await runDueChecks(deps);
      if (report.ran || report.groups_sent || report.errors) {
        log("info", "job", {
          job: "checks",
          polled: 1,
          ms: Math.round(performance.now() - t0),
          ...report,
        });
      }
    } while (st.again);
  } finally {
    st.busy = false;
  }
}
