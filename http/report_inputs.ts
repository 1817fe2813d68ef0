import { z } from "zod";

/**
 * The query of an uptime report (GET /api/me/reports, /api/me/reports/csv and the /me/reports
 * page alike): what it covers (a service, a status page, else the whole account) and when (a
 * month, or a range of days; else this month so far). kv/status/reports.ts checks the dates.
 */
export const ReportQuery = z.object({
  service: z.coerce.number().int().positive().optional().meta({
    description: "A service's id: the report of that service alone",
  }),
  page: z.string().max(80).optional().meta({
    description: "A status page's slug: the report of the services it shows",
  }),
  month: z.string().max(7).optional().meta({
    description: "A month, YYYY-MM (UTC)",
    example: "2026-11",
  }),
  from: z.string().max(10).optional().meta({ description: "The first day, YYYY-MM-DD (UTC)" }),
  to: z.string().max(10).optional().meta({ description: "The last day, YYYY-MM-DD (included)" }),
});

type ReportQueryInput = z.infer<typeof ReportQuery>;

export const ReportMailBody = z.object({
  monthly: z.boolean().meta({
    description: "Mail last month's report of the whole account on the first day of each month",
  }),
});

/** A query as the domain's ask: empty fields (a GET form's) count as not given. */
export function reportAsk(q: ReportQueryInput) {
  const given = (v: string | undefined) =>
    v === undefined || v.trim() === "" ? undefined : v.trim();
  const slug = given(q.page);
  return {
    scope: q.service !== undefined
      ? { kind: "service" as const, id: q.service }
      : slug !== undefined
      ? { kind: "page" as const, slug }
      : { kind: "account" as const },
    month: given(q.month),
    from: given(q.from),
    to: given(q.to),
  };
}
