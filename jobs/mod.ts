import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { errorKind, log } from "../lib/log.ts";
import { count } from "../lib/metrics.ts";

export interface Job {
  name: string;
  run(deps: Deps): Promise<unknown>;
}

/**
 * A job whose module is imported on its first run: the server answers requests sooner and
 * holds less memory when it does not evaluate every job (and all it imports) at start.
 */
function job<M>(name: string, load: () => Promise<M>, pick: (m: M) => Job["run"]): Job {
  return { name, run: async (deps) => await pick(await load())(deps) };
}

/** Run by the minutely cron (main.ts); each job is independent of the others. */
export const MINUTELY: Job[] = [
  // The outbox's retries and what a dead process had claimed (kv/alerts/outbox.ts).
  job("outbox", () => import("../kv/alerts/outbox.ts"), (m) => m.deliverDue),
  job("chain-trail", () => import("./chain_trail.ts"), (m) => m.chainTrailJob),
  job("sweep-rates", () => import("./sweep_rates.ts"), (m) => m.sweepRatesJob),
  job("checks", () => import("./checks.ts"), (m) => m.checksJob),
  job("sweep-uploads", () => import("./sweep_uploads.ts"), (m) => m.sweepUploadsJob),
  job("expire-proposals", () => import("./expire_proposals.ts"), (m) => m.expireProposalsJob),
];

/**
 * Run once by a process this long after its start (main.ts): a look or a send that a process
 * cut by dying holds its lease or claim (kv/service/store.ts LEASE_MS, kv/alerts/outbox.ts CLAIM_MS,
 * 40 s) no longer, so what it cut resumes within a minute of the restart, not at the minutely
 * run after the claim's end.
 */
export const RESUME_AFTER_MS = 45_000;
const RESUMED = new Set(["outbox", "checks"]);
/** The jobs that resume what a crash cut, named apart in the logs ("checks-resume"). */
export const RESUME: Job[] = MINUTELY.filter((j) => RESUMED.has(j.name))
  .map((j) => ({ ...j, name: `${j.name}-resume` }));

/** When the daily cron runs (main.ts): 03:17 UTC. */
export const DAILY_CRON = "17 3 * * *";
const DAILY_AT = 3 * HOUR + 17 * MINUTE;

/**
 * Whether the daily jobs' time (03:17 UTC) came in (prev, now]. With a test clock
 * (TEST_CLOCK_FILE) the daily cron still follows the system's time, so the minutely run starts
 * the daily jobs when the server's clock passed theirs (main.ts).
 */
export function dailyPassed(prev: number, now: number): boolean {
  return Math.floor((now - DAILY_AT) / DAY) * DAY + DAILY_AT > prev;
}

/** Run by the daily cron (main.ts). */
export const DAILY: Job[] = [
  job("dormant-notices", () => import("./dormant.ts"), (m) => m.dormantJob),
  job("expire-requests", () => import("./expire_requests.ts"), (m) => m.expireRequestsJob),
  job("monthly-reports", () => import("./monthly_reports.ts"), (m) => m.monthlyReportsJob),
];

/**
 * Runs jobs side by side: a long check sweep must not hold back mail retries or clean-ups, and
 * one failing job does not stop the others. Answers whether every job succeeded.
 */
export async function runJobs(deps: Deps, jobs: Job[]): Promise<boolean> {
  let failed = 0;
  await Promise.all(jobs.map(async (job) => {
    const t0 = performance.now();
    try {
      const result = await job.run(deps);
      count("catalogue_job_runs_total", `job="${job.name}",outcome="done"`);
      log("info", "job", {
        job: job.name,
        ms: Math.round(performance.now() - t0),
        ...tally(result),
      });
    } catch (err) {
      failed++;
      count("catalogue_job_runs_total", `job="${job.name}",outcome="failed"`);
      log("error", "job failed", {
        job: job.name,
        ms: Math.round(performance.now() - t0),
        error: errorKind(err),
      });
    }
  }));
  return failed === 0;
}

/** A job's answer as log fields: its counts only (a number, or an object of numbers). */
function tally(result: unknown): Record<string, number> {
  if (typeof result === "number") return { count: result };
  if (!result || typeof result !== "object") return {};
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(result)) if (typeof v === "number") out[k] = v;
  return out;
}
