import type { Deps } from "../lib/deps.ts";

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
  job("outbox", () => import("./outbox.ts"), (m) => m.outboxJob),
  job("sweep-rates", () => import("./sweep_rates.ts"), (m) => m.sweepRatesJob),
  job("checks", () => import("./checks.ts"), (m) => m.checksJob),
  job("sweep-uploads", () => import("./sweep_uploads.ts"), (m) => m.sweepUploadsJob),
  job("expire-proposals", () => import("./expire_proposals.ts"), (m) => m.expireProposalsJob),
];

/** Run by the daily cron (main.ts). */
export const DAILY: Job[] = [
  job("dormant-notices", () => import("./dormant.ts"), (m) => m.dormantJob),
  job("expire-requests", () => import("./expire_requests.ts"), (m) => m.expireRequestsJob),
];

/**
 * Runs jobs side by side: a long check sweep must not hold back mail retries or clean-ups, and
 * one failing job does not stop the others.
 */
export async function runJobs(deps: Deps, jobs: Job[]): Promise<void> {
  await Promise.all(jobs.map(async (job) => {
    try {
      await job.run(deps);
    } catch (err) {
      console.error(`job ${job.name} failed:`, err instanceof Error ? err.message : err);
    }
  }));
}
