import { mailMonthlyReports } from "../kv/status/reports.ts";
import type { Deps } from "../lib/deps.ts";

/** Daily: last month's uptime report to each account that asked, once (kv/status/reports.ts). */
export const monthlyReportsJob = (deps: Deps) => mailMonthlyReports(deps);
