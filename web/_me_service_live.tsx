/**
 * What changes with a service's state on its page (/me/services/<id>): the notes of maintenance
 * and thresholds, uptime, the response-time chart (web/_me_service_chart.tsx), its incidents and
 * events log (web/_me_service_history.tsx) and 90 daily bars. Drawn on the server (lib/svg.ts);
 * no script, no inline style.
 */
import { raw } from "hono/html";
import { serviceHistory, serviceMaintenance } from "../kv/service/windows.ts";
import { listEvents } from "../kv/service/heartbeats.ts";
import { KEEP_DAYS } from "../kv/service/history.ts";
import type { Service, ServiceView } from "../kv/service/commands.ts";
import { spanText } from "../kv/service/state.ts";
import { DAY } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { offPeriods } from "../lib/history.ts";
import { withDurations } from "../lib/runs.ts";
import { percentText, uptimeBars } from "../lib/svg.ts";
import { At } from "./_me.tsx";
import { StateBadge } from "./_state.tsx";
import { type Range, ResponseTimePart } from "./_me_service_chart.tsx";
import {
  ChangesPart,
  EventsPart,
  MonitorDownPart,
  ServiceIncidentsPart,
} from "./_me_service_history.tsx";

/** Why an uptime figure is a dash: said once on the page, and on each dash's hover. */
const NOT_YET =
  "No figure yet: uptime is given once a service has been watched for 15 minutes (after its first check, or its first ping)";
/**
 * What changes with the service's state, the part of its page live.js replaces: the notes of
 * maintenance and thresholds, uptime, the response-time chart, incidents, the 90 days and the
 * events log.
 */
export async function liveSection(deps: Deps, s: Service, view: ServiceView, range: Range) {
  const now = deps.clock.now();
  const h = await serviceHistory(deps.kv, s, now);
  const hb = s.kind === "webhook";
  const events = hb ? withDurations(await listEvents(deps.kv, s.account, s.id)) : [];
  const quiet = await serviceMaintenance(deps.kv, s, now);
  const periods = offPeriods({
    changes: h.changes,
    before: h.before,
    from: now - KEEP_DAYS * DAY,
  });
  return (
    <>
      {quiet === null ? null : (
        <p class="notice" role="status">
          <StateBadge state="maintenance" /> Under maintenance until{" "}
          <At at={quiet} />: failures alert nobody; a failure that lasts past the end alerts then.
          {" "}
          <a href="/me/maintenance">Maintenance windows</a>
        </p>
      )}
      {!hb && (s.threshold ?? 1) > 1
        ? (
          <p>
            Alerts after {s.threshold} failed checks in a row; failed in a row now:{" "}
            {view.failed_checks}.
          </p>
        )
        : null}
      {hb && ((s.threshold ?? 1) > 1 || view.min_duration !== null)
        ? (
          <p>
            Alerts after {s.threshold ?? 1} failed or missing run{(s.threshold ?? 1) > 1 ? "s" : ""}
            {" "}
            in a row; in a row now: {view.failed_checks}.
            {view.min_duration !== null
              ? ` A run shorter than ${spanText(view.min_duration * 1000)} counts as failed.`
              : ""}
          </p>
        )
        : null}
      <dl class="svc-figures uptime-figures" aria-label="Uptime">
        {([["24 hours", h.uptime.day], ["7 days", h.uptime.week], ["30 days", h.uptime.month], [
          "90 days",
          h.uptime.all,
        ]] as const).map(([term, up]) => (
          <div>
            <dt>Uptime, {term}</dt>
            <dd>
              {up === null
                ? <span class="none" role="img" aria-label={NOT_YET} title={NOT_YET}>—</span>
                : percentText(up)}
            </dd>
          </div>
        ))}
      </dl>
      {h.uptime.all === null ? <p class="hint">{NOT_YET}.</p> : null}
      {hb ? null : <ResponseTimePart deps={deps} s={s} range={range} now={now} down={periods} />}
      <ServiceIncidentsPart periods={periods} now={now} />
      <section aria-labelledby="days" class="panel">
        <h2 id="days">Last 90 days</h2>
        <p class="hint">Each bar is a day, the newest on the right.</p>
        <figure>
          {raw(uptimeBars(h.days))}
          <figcaption class="hint">
            Green: never down that day; yellow: down for less than an hour; red: down for an hour or
            more; blue: all day in maintenance; grey: no data (not watched yet, or this monitor was
            down).
          </figcaption>
        </figure>
      </section>
      {h.gaps.length ? <MonitorDownPart gaps={h.gaps} now={now} /> : null}
      {hb
        ? <EventsPart events={events} now={now} />
        : <ChangesPart changes={h.changes} now={now} />}
    </>
  );
}
