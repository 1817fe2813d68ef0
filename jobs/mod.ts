import type { Deps } from "../lib/deps.ts";
import { checksJob } from "./checks.ts";
import { dormantJob } from "./dormant.ts";
import { expireProposalsJob } from "./expire_proposals.ts";
import { expireRequestsJob } from "./expire_requests.ts";
import { outboxJob } from "./outbox.ts";
import { sweepRatesJob } from "./sweep_rates.ts";
import { sweepUploadsJob } from "./sweep_uploads.ts";

export interface Job {
  name: string;
  run(deps: Deps): Promise<unknown>;
}

/** Run by the minutely cron (main.ts); each job is independent of the others. */
export const MINUTELY: Job[] = [
  { name: "outbox", run: outboxJob },
  { name: "sweep-rates", run: sweepRatesJob },
  { name: "checks", run: checksJob },
  { name: "sweep-uploads", run: sweepUploadsJob },
  { name: "expire-proposals", run: expireProposalsJob },
];

/** Run by the daily cron (main.ts). */
export const DAILY: Job[] = [
  { name: "dormant-notices", run: dormantJob },
  { name: "expire-requests", run: expireRequestsJob },
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
