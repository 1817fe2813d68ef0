/**
 * Uptime reports (/me/reports): what it covers (the whole account, the status page, one
 * service) and when (a month, or a range of days), asked with a GET form so a report has an
 * address to keep, print or mail; the report as a page that prints on A4 and Letter alike
 * (site.css `@media print`), as CSV (/me/reports/csv, the same query), and the monthly mail
 * turned on or off. The same domain functions as /api/me/reports (kv/status/reports.ts).
 */
import { reportAsk, ReportQuery } from "../http/report_inputs.ts";
import { getAccount } from "../kv/accounts/accounts.ts";
import {
  outageWords,
  type Report,
  reportCsv,
  reportMailWanted,
  setReportMail,
  uptimeReport,
} from "../kv/status/reports.ts";
import { listServices } from "../kv/service/commands.ts";
import { listStatusPages, pageSlug, pageTitle } from "../kv/status/settings.ts";
import { iso, isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { DomainError } from "../lib/errors.ts";
import { durationText, uptimeText } from "../lib/report.ts";
import { type FormView } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { MeNav, when } from "./_me.tsx";
import { Table } from "./_table.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";

const LABELS: Record<string, string> = {
  what: "What it covers",
  month: "Month",
  from: "From (day)",
  to: "To (day, included)",
};

/**
 * The page's query as ReportQuery's: the form's `what` names a service (`s-<id>`), a status page
 * (`p-<slug>`) or the first status page (`page`, the form's value before there were several).
 */
function queryOf(q: Record<string, string>, firstSlug: string | null) {
  const what = q.what ?? "";
  const service = q.service ?? (what.startsWith("s-") ? what.slice(2) : undefined);
  const page = q.page ??
    (what.startsWith("p-") ? what.slice(2) : what === "page" && firstSlug ? firstSlug : undefined);
  // With days given, the month field the form keeps filled is not asked for.
  const days = !!(q.from?.trim() || q.to?.trim());
  return {
    service: service || undefined,
    page: page || undefined,
    month: days && q.what !== undefined ? undefined : q.month || undefined,
    from: q.from || undefined,
    to: q.to || undefined,
  };
}

/** The canonical query of a report: what the CSV link and the mail name. */
function searchOf(q: ReturnType<typeof queryOf>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

async function reportPage(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const acc = (await getAccount(deps.kv, me.id)).value ?? me;
  const raw = c.req.query();
  const [services, pages, mailed] = await Promise.all([
    listServices(deps.kv, me.id),
    listStatusPages(deps.kv, me.id),
    reportMailWanted(deps.kv, me.id),
  ]);
  const first = pages.find((p) => p.id === 1);
  const q = queryOf(raw, first ? acc.slug : null);
  const what = q.service ? `s-${q.service}` : q.page ? `p-${q.page}` : "";
  const now = deps.clock.now();
  const view: FormView = {
    values: { ...q, what, month: q.month ?? (q.from || q.to ? "" : isoDate(now).slice(0, 7)) },
    errors: {},
  };
  let report: Report | null = null;
  let status: 200 | 400 | 404 = 200;
  const parsed = ReportQuery.safeParse(q);
  if (!parsed.success) {
    view.error = "The report's address is not one this page makes: choose again below.";
    status = 400;
  } else {
    try {
      report = await uptimeReport(deps, me.id, reportAsk(parsed.data));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const field = typeof err.extra.field === "string" ? err.extra.field : null;
      if (field) view.errors[field] = err.message.replace(/^[a-z_]+: /, "");
      else view.error = err.message;
      status = err.kind === "not_found" ? 404 : 400;
    }
  }
  const options: [string, string][] = [
    ["", "All services"],
    ...pages.map((p): [string, string] => [
      `p-${pageSlug(p, acc)}`,
      `Status page ${pageTitle(p, acc)} (/status/${pageSlug(p, acc)})`,
    ]),
    ...services.map((x): [string, string] => [`s-${x.service.id}`, x.service.name]),
  ];
  const search = searchOf(q);
  return {
    status,
    body: (
      <>
        <div class="noprint">
          <MeNav here="/me/services" viewer={me} />
        </div>
        <h1>Uptime report</h1>
        <AskForm view={view} options={options} />
        {report ? <ReportPart r={report} /> : null}
        {report
          ? (
            <p class="noprint">
              <a href={`/me/reports/csv${search}`} download>Download as CSV</a>{" "}
              · To print or keep as PDF, use the browser's Print (it fits A4 and Letter).
            </p>
          )
          : null}
        <section aria-labelledby="monthly" class="panel noprint">
          <h2 id="monthly">Monthly by mail</h2>
          <p>
            {mailed
              ? "On: the report of all services for the month before comes by mail on the first day of each month."
              : "Off: ask for the report of all services for the month before, by mail on the first day of each month."}
          </p>
          <PostButton action={`/me/reports/mail${mailed ? "/off" : "/on"}`} kind="secondary">
            {mailed ? "Stop the monthly mail" : "Mail it to me monthly"}
          </PostButton>
        </section>
        <p class="noprint">
          <a href="/me/services">All services</a> ·{" "}
          <a href="/me/maintenance">Maintenance windows</a>
        </p>
      </>
    ),
  };
}

function AskForm({ view, options }: { view: FormView; options: [string, string][] }) {
  const F = fields(view, LABELS);
  return (
    <form method="get" action="/me/reports" class="noprint report-ask" novalidate>
      <F.Summary />
      <F.Select name="what" options={options} />
      <F.Field name="month" type="month" hint="YYYY-MM, in UTC" />
      <fieldset>
        <legend>Or a range of days (UTC)</legend>
        <F.Field name="from" type="date" />
        <F.Field name="to" type="date" />
      </fieldset>
      <button type="submit">Show the report</button>
    </form>
  );
}

/** " (depends on LAN router)" after a service's name. */
const DependsOn = ({ names }: { names: string[] }) => (
  <span class="hint">
    {` (depends on `}
    <UserText>{names.join(", ")}</UserText>)
  </span>
);

const sec = (s: number) => (s > 0 ? durationText(s) : "none");

function ReportPart({ r }: { r: Report }) {
  const t = r.totals;
  return (
    <article class="report" aria-labelledby="report-title">
      <h2 id="report-title">
        <UserText>{r.title}</UserText>: {r.period}
      </h2>
      <p>
        From <time datetime={iso(r.from)}>{when(r.from)}</time> to{" "}
        <time datetime={iso(r.to)}>{when(r.to)}</time> (UTC). Made {when(r.created)}.
      </p>
      <p class="report-rule">
        <strong>How uptime is counted.</strong> {r.rule}
      </p>
      <dl class="svc-figures" aria-label="Totals">
        <div>
          <dt>Uptime</dt>
          <dd>{uptimeText(t.uptime)}</dd>
        </div>
        <div>
          <dt>Outages</dt>
          <dd>{t.outages}</dd>
        </div>
        <div>
          <dt>Longest outage</dt>
          <dd>{sec(t.longest_outage_s)}</dd>
        </div>
        <div>
          <dt>Checks and runs</dt>
          <dd>{t.checks}</dd>
        </div>
      </dl>
      <Table
        class="report-table"
        caption="Each service over the period"
        rows={r.rows}
        empty={<p>No services in this report.</p>}
        columns={[
          {
            label: "Service",
            rowHeader: true,
            cell: (x) => (
              <>
                <UserText>{x.name}</UserText>
                {x.depends_on.length ? <DependsOn names={x.depends_on} /> : null}
              </>
            ),
          },
          { label: "Uptime", cell: (x) => uptimeText(x.uptime) },
          { label: "Down", cell: (x) => sec(x.down_s) },
          { label: "Unreachable (dependency)", cell: (x) => sec(x.unreachable_s) },
          { label: "Maintenance", cell: (x) => sec(x.maintenance_s) },
          {
            label: "No data",
            cell: (x) => (
              <>
                {sec(x.no_data_s + x.monitor_down_s)}
                {x.monitor_down_s
                  ? <span class="hint">(monitor down {durationText(x.monitor_down_s)})</span>
                  : null}
              </>
            ),
          },
          { label: "Outages", cell: (x) => x.outages.length },
          { label: "Longest", cell: (x) => sec(x.longest_outage_s) },
          {
            label: "Checks or runs",
            cell: (x) => x.checks_partial ? `at least ${x.checks}` : x.checks,
          },
        ]}
      />
      {r.rows.filter((x) => x.outages.length).map((x) => (
        <section class="report-outages" aria-label={`Outages of ${x.name}`}>
          <h3>
            Outages of <UserText>{x.name}</UserText>
          </h3>
          <Table
            rows={x.outages}
            columns={[
              {
                label: "From",
                cell: (o) => <time datetime={iso(o.from)}>{when(o.from)}</time>,
              },
              {
                label: "To",
                cell: (o) =>
                  o.to === null ? "still off" : <time datetime={iso(o.to)}>{when(o.to)}</time>,
              },
              {
                label: "Lasted",
                cell: (o) =>
                  durationText(o.duration_s),
              },
              {
                label: "Counted as",
                cell: (o) =>
                  o.explained ? outageWords(o) : `down ${durationText(o.down_s)}`,
              },
            ]}
          />
        </section>
      ))}
    </article>
  );
}

export function reportPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/reports", async (c) => {
    const { status, body } = await reportPage(deps, c);
    c.status(status);
    return c.render(body, { title: "Uptime report", noindex: true });
  });

  app.get("/me/reports/csv", async (c) => {
    const me = requireAccount(c);
    const first = (await listStatusPages(deps.kv, me.id)).find((p) => p.id === 1);
    const q = queryOf(c.req.query(), first ? me.slug : null);
    const parsed = ReportQuery.parse(q);
    const r = await uptimeReport(deps, me.id, reportAsk(parsed));
    c.header("Content-Type", "text/csv; charset=utf-8");
    c.header("Content-Disposition", `attachment; filename="uptime-${isoDate(r.from)}.csv"`);
    return c.body(reportCsv(r), 200);
  });

  for (const on of [true, false]) {
    app.post(`/me/reports/mail/${on ? "on" : "off"}`, async (c) => {
      const me = requireAccount(c);
      await setReportMail(deps, me.id, on);
      return seeOther(c, "/me/reports");
    });
  }

  return app;
}
