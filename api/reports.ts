import { z } from "zod";
import {
  type Report,
  reportCsv,
  reportMailWanted,
  setReportMail,
  uptimeReport,
} from "../kv/status/reports.ts";
import { iso, isoOrNull } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { body, errors, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";
import { reportAsk, ReportMailBody, ReportQuery } from "../http/report_inputs.ts";

const Seconds = z.number().int();
const OutageSchema = z.object({
  from: z.string(),
  to: z.string().nullable().meta({ description: "null: still off at the report's end" }),
  duration_s: Seconds,
  down_s: Seconds.meta({ description: "The part counted as the service's own downtime" }),
  explained: z.enum(["dependency", "maintenance", "monitor down"]).nullable().meta({
    description: "What explains an outage none of which counts as down",
  }),
}).meta({ id: "ReportOutage" });
const Figures = {
  uptime: z.number().nullable().meta({
    description: "Up over up and down, 0 to 1 (the rule: `rule`); null below 15 minutes measured",
  }),
  up_s: Seconds,
  down_s: Seconds,
  unreachable_s: Seconds.meta({
    description: "Off while a service it depends on was off: apart, not its own failure",
  }),
  maintenance_s: Seconds,
  monitor_down_s: Seconds.meta({ description: "This monitor itself was down: no data" }),
  no_data_s: Seconds.meta({ description: "Not watched yet, waiting or paused: not counted" }),
  longest_outage_s: Seconds,
};
const ReportSchema = z.object({
  title: z.string(),
  period: z.string(),
  from: z.string(),
  to: z.string().meta({ description: "The end of the range, or now when it is not over" }),
  rule: z.string().meta({
    description: "How uptime is counted, in words, as the report states it",
  }),
  services: z.array(z.object({
    id: z.number().int(),
    name: z.string(),
    kind: z.string(),
    group: z.string(),
    ...Figures,
    outages: z.array(OutageSchema),
    checks: z.number().int().meta({ description: "Checks recorded, or a heartbeat's runs" }),
    checks_partial: z.boolean().meta({
      description: "A heartbeat's runs counted among its last 100 signals kept only",
    }),
    depends_on: z.array(z.string()),
  })),
  totals: z.object({
    ...Figures,
    outages: z.number().int(),
    checks: z.number().int(),
  }),
}).meta({ id: "UptimeReport" });

/** The report as the API answers it: times as ISO strings. */
function reportView(r: Report) {
  return {
    title: r.title,
    period: r.period,
    from: iso(r.from),
    to: iso(r.to),
    rule: r.rule,
    services: r.rows.map((x) => ({
      ...x,
      outages: x.outages.map((o) => ({ ...o, from: iso(o.from), to: isoOrNull(o.to) })),
    })),
    totals: r.totals,
  };
}

/** Uptime reports (kv/status/reports.ts). */
export function reportRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);

  app.openapi(
    bearer({
      method: "get",
      path: "/me/reports",
      tags: ["services"],
      summary: "An uptime report: a service, a status page or the whole account; a month or days",
      description: "Per service: uptime with its rule (maintenance left out, unreachable through " +
        "a dependency apart, no data not counted), outages with their durations, the longest, " +
        "and the checks or runs counted. Without a month or days: this month so far.",
      request: { query: ReportQuery },
      responses: { 200: jsonResponse(ReportSchema), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const r = await uptimeReport(deps, c.get("account").id, reportAsk(c.req.valid("query")));
      return c.json(reportView(r), 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/reports/csv",
      tags: ["services"],
      summary: "The same uptime report as CSV (RFC 4180): a line per service, then its outages",
      request: { query: ReportQuery },
      responses: {
        200: { description: "CSV", content: { "text/csv": { schema: z.string() } } },
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const r = await uptimeReport(deps, c.get("account").id, reportAsk(c.req.valid("query")));
      c.header("Content-Type", "text/csv; charset=utf-8");
      c.header(
        "Content-Disposition",
        `attachment; filename="uptime-${iso(r.from).slice(0, 10)}.csv"`,
      );
      return c.body(reportCsv(r), 200);
    },
  );

  app.openapi(
    bearer({
      method: "get",
      path: "/me/reports/mail",
      tags: ["services"],
      summary: "Whether last month's report is mailed on the first of each month",
      responses: { 200: jsonResponse(ReportMailBody), ...errors(401) },
    }),
    async (c) => c.json({ monthly: await reportMailWanted(deps.kv, c.get("account").id) }, 200),
  );

  app.openapi(
    bearer({
      method: "put",
      path: "/me/reports/mail",
      tags: ["services"],
      summary: "Ask for (or stop) the monthly report mail of the whole account",
      request: body(ReportMailBody),
      responses: { 200: jsonResponse(ReportMailBody), ...errors(400, 401) },
    }),
    async (c) => {
      const { monthly } = c.req.valid("json");
      return c.json({ monthly: await setReportMail(deps, c.get("account").id, monthly) }, 200);
    },
  );

  return app;
}
