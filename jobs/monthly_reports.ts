import { mailMonthlyReports } from "../kv/reports.ts";
import type { Deps } from "../lib/deps.ts";

/** Daily: last month's uptime report to each account that asked, once (kv/reports.ts). */
export const monthlyReportsJob = (deps: Deps) => mailMonthlyReports(deps);
