/**
 * The monitoring parts of a service's page (/me/services/<id>): uptime, the response-time
 * chart over 1 hour, 24 hours, 7 or 30 days (checked kinds), its incidents, 90 daily bars, the events
 * log, the alert channels it uses and its badge. Drawn on the server (lib/svg.ts); no script,
 * no inline style.
 */
import { raw } from "hono/html";
import { listChannels } from "../kv/alerts/channels.ts";
import { serviceHistory, serviceMaintenance } from "../kv/service/windows.ts";
import { listEvents } from "../kv/service/heartbeats.ts";
import { KEEP_DAYS, recentResults, type ServiceHistory } from "../kv/service/history.ts";
import type { Service, ServiceView } from "../kv/service/commands.ts";
import { spanText } from "../kv/service/state.ts";
import { DAY, HOUR, iso, MINUTE } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { type Bucket, buckets, type OffPeriod, offPeriods, percentile } from "../lib/history.ts";
import { withDurations } from "../lib/runs.ts";
import {
  minutesText,
  msText,
  percentText,
  responseTimeChart,
  type Tick,
  uptimeBars,
} from "../lib/svg.ts";
import { CopyField, PostButton, UserText } from "./_layout.tsx";
import { Ago, At, when } from "./_me.tsx";
import { StateBadge } from "./_state.tsx";
import { Table } from "./_table.tsx";

const KIND_WORDS = { success: "success", start: "start", fail: "failure", log: "log" } as const;

const duration = (ms: number | null) =>
  ms === null
    ? ""
    : ms < 1000
    ? `${ms} ms`
    : ms < 120_000
    ? `${Math.round(ms / 1000)} s`
    : `${Math.round(ms / 60_000)} min`;

/**
 * A service's uptime in words, the same on its own page and its public status page: before the
 * first figure the state may already be known (a beat came), so "no data" would read as wrong.
 */
export const uptimeWords = (up: number | null) =>
  up === null
    ? "not measured yet (the first figure comes with the first check, or when a heartbeat is first due)"
    : percentText(up);

/** Why an uptime figure is a dash: said once on the page, and on each dash's hover. */
const NOT_YET =
  "No figure yet: uptime is given once a service has been watched for 15 minutes (after its first check, or its first ping)";

/** The periods the response-time chart shows: its span, its stretches and its ticks. */
export const RANGES = {
  "1h": { words: "1 hour", span: HOUR, count: 60, step: 15 * MINUTE, tick: "hour" },
  "24h": { words: "24 hours", span: DAY, count: 96, step: 6 * HOUR, tick: "hour" },
  "7d": { words: "7 days", span: 7 * DAY, count: 168, step: DAY, tick: "day" },
  "30d": { words: "30 days", span: 30 * DAY, count: 120, step: 7 * DAY, tick: "day" },
} as const;
export type Range = keyof typeof RANGES;

/** Points on the time axis: each `step` (whole UTC hours or days) within [from, to]. */
function ticksOf(from: number, to: number, range: Range): Tick[] {
  const { step, tick } = RANGES[range];
  const out: Tick[] = [];
  for (let t = Math.ceil(from / step) * step; t < to; t += step) {
    const text = tick === "hour" ? iso(t).slice(11, 16) : dayWords(t);
    out.push({ at: t, text, kind: tick });
  }
  return out;
}

const MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ");
/** "Nov 27" (UTC; the page writes it again in the reader's zone). */
const dayWords = (t: number) => `${MONTHS[new Date(t).getUTCMonth()]} ${new Date(t).getUTCDate()}`;

/** A stretch's words on hover: when, then its figures. */
function bucketLabel(b: Bucket): string {
  const span = `${when(b.from)} to ${iso(b.to).slice(11, 16)}`;
  if (!b.checks) return `${span}: no checks`;
  const failed = b.failed ? `, ${b.failed} failed` : "";
  return `${span}: median ${msText(b.median_ms!)}, 95th percentile ${
    msText(b.p95_ms!)
  } (${b.checks} check${b.checks === 1 ? "" : "s"}${failed})`;
}

/** The links that choose the chart's period (a GET: no script needed). */
function RangeLinks(props: { id: number; range: Range }) {
  return (
    <nav aria-label="Period of the chart" class="ranges">
      <ul class="inline">
        {(Object.keys(RANGES) as Range[]).map((r) => (
          <li>
            <a
              href={`/me/services/${props.id}?range=${r}#chart`}
              aria-current={r === props.range ? "page" : undefined}
            >
              {RANGES[r].words}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A checked service's response times over the chosen period, with its figures in words. */
async function ChartPart(
  props: { deps: Deps; s: Service; range: Range; now: number; down: OffPeriod[] },
) {
  const { s, range, now } = props;
  const { span, count, words } = RANGES[range];
  // Stretches on whole quarter hours, hours or six hours: the last one holds now.
  const size = span / count;
  const to = Math.floor(now / size) * size + size;
  const from = to - span;
  const results = await recentResults(props.deps.kv, s.account, s.id, now, now - from);
  const data = buckets(results, from, to, count).map((b) => ({ ...b, label: bucketLabel(b) }));
  const times = results.map((r) => r.ms);
  const failed = results.filter((r) => r.state === "off").length;
  const median = percentile(times, 50);
  const p95 = percentile(times, 95);
  const summary = results.length
    ? `${results.length} check${results.length === 1 ? "" : "s"}: median ${msText(median!)}, ` +
      `95th percentile ${msText(p95!)}, slowest ${msText(Math.max(...times))}; ${
        failed ? `${failed} failed` : "none failed"
      }.`
    : "No checks in this period yet.";
  return (
    <section aria-labelledby="chart" class="panel">
      <h2 id="chart">Response time, last {words}</h2>
      <RangeLinks id={s.id} range={range} />
      <figure>
        {raw(responseTimeChart(data, {
          from,
          to,
          ticks: ticksOf(from, to, range),
          down: props.down.map((p) => [p.from, p.to ?? now]),
          label: `Response time of ${s.name} over the last ${words}. ${summary}`,
        }))}
        <figcaption class="hint">
          <span class="key key-median"></span> median, <span class="key key-p95"></span>{" "}
          95th percentile, <span class="key key-fail"></span> failed checks, shaded: down. Times in
          {" "}
          <span data-zone="">UTC</span>.
        </figcaption>
      </figure>
      <p>{summary}</p>
    </section>
  );
}

/** The times the service was down, newest first, each with its length. */
function IncidentsPart(props: { periods: OffPeriod[]; now: number }) {
  const shown = props.periods.slice(0, 20);
  return (
    <section aria-labelledby="incidents" class="panel">
      <h2 id="incidents">Incidents</h2>
      {shown.length
        ? (
          <ul class="incidents">
            {shown.map((p) => (
              <li>
                {p.to === null ? <StateBadge state="off" /> : <span class="tag">Resolved</span>}
                {" "}
                {p.to === null
                  ? (
                    <>
                      Down since <Ago at={p.from} now={props.now} />, for{" "}
                      {minutesText((props.now - p.from) / 1000)} so far
                    </>
                  )
                  : (
                    <>
                      Down for {minutesText((p.to - p.from) / 1000)}, from <At at={p.from} />{" "}
                      (<Ago at={p.from} now={props.now} />)
                    </>
                  )}
              </li>
            ))}
          </ul>
        )
        : <p>No incidents in the last 90 days.</p>}
      {props.periods.length > shown.length
        ? <p class="meta">The last {shown.length} of {props.periods.length} incidents.</p>
        : null}
    </section>
  );
}

/**
 * What changes with the service's state, the part of its page live.js replaces: the notes of
 * maintenance and thresholds, uptime, the response-time chart, incidents, the 90 days and the
 * events log.
 */
export async function watchSection(deps: Deps, s: Service, view: ServiceView, range: Range) {
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
      {hb ? null : <ChartPart deps={deps} s={s} range={range} now={now} down={periods} />}
      <IncidentsPart periods={periods} now={now} />
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

/**
 * When this monitor itself was not running (kv/service/monitor.ts), newest first: no data then,
 * neither up nor down.
 */
function MonitorDownPart(props: { gaps: [number, number][]; now: number }) {
  const shown = props.gaps.slice(-20).reverse();
  return (
    <section aria-labelledby="monitor-down" class="panel">
      <h2 id="monitor-down">No data (monitor down)</h2>
      <p class="hint">
        This monitor was not running then: no checks, no pings received. Those times count neither
        as up nor as down.
      </p>
      <ul class="events">
        {shown.map(([from, to]) => (
          <li>
            <StateBadge state="nodata" /> <At at={from} /> to <At at={to} /> ({spanText(to - from)})
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The state changes of a checked service, newest first: its events log. */
function ChangesPart(props: { changes: ServiceHistory["changes"]; now: number }) {
  const shown = props.changes.slice(-50).reverse();
  return (
    <section aria-labelledby="events" class="panel">
      <h2 id="events">Events</h2>
      {shown.length
        ? (
          <ul class="events">
            {shown.map((c) => (
              <li>
                <Ago at={c.at} now={props.now} />: <StateBadge state={c.state} />{" "}
                <UserText>{c.status}</UserText>
              </li>
            ))}
          </ul>
        )
        : <p>No changes of state yet.</p>}
    </section>
  );
}

type ShownEvent = Awaited<ReturnType<typeof listEvents>>[number] & { duration_ms: number | null };

/** The signals of a heartbeat, newest first. */
function EventsPart({ events, now }: { events: ShownEvent[]; now: number }) {
  return (
    <section aria-labelledby="events" class="panel">
      <h2 id="events">Events</h2>
      <Table
        caption={`The last ${events.length} signals, newest first`}
        rows={events}
        empty={<p>No signals yet.</p>}
        columns={[
          { label: "Time", cell: (e) => <Ago at={e.at} now={now} /> },
          {
            label: "Signal",
            cell: (e) => (
              <>
                {KIND_WORDS[e.kind]}
                {e.code !== null ? ` (exit ${e.code})` : ""}
              </>
            ),
          },
          { label: "Took", cell: (e) => duration(e.duration_ms) },
          { label: "Status", cell: (e) => <UserText>{e.status}</UserText> },
          {
            label: "Log",
            cell: (e) =>
              e.body
                ? (
                  <details>
                    <summary>Show the log</summary>
                    <pre>{e.body}</pre>
                  </details>
                )
                : "none",
          },
          { label: "From", cell: (e) => e.origin },
        ]}
      />
    </section>
  );
}

/** The alert channels and the badge: what the page's owner sets, not what changes live. */
export async function settingsSection(deps: Deps, s: Service, view: ServiceView) {
  const channels = await listChannels(deps.kv, s.account);
  const chosen = new Set(s.channels ?? []);
  return (
    <>
      <ChannelsPart service={s.id} channels={channels} chosen={chosen} />
      <BadgePart service={s} path={view.badge_path} base={deps.config.baseUrl} />
    </>
  );
}

/** The channels a service's alerts go to, besides mail. */
function ChannelsPart(
  { service, channels, chosen }: {
    service: number;
    channels: Awaited<ReturnType<typeof listChannels>>;
    chosen: Set<number>;
  },
) {
  return (
    <>
      <h2>Alert channels</h2>
      {channels.length
        ? (
          <form method="post" action={`/me/services/${service}/channels`}>
            <fieldset>
              <legend>Besides mail, alert these channels</legend>
              {channels.map((c) => (
                <div class="field">
                  <input
                    type="checkbox"
                    id={`ch-${c.id}`}
                    name="channel"
                    value={String(c.id)}
                    checked={chosen.has(c.id)}
                  />
                  <label for={`ch-${c.id}`}>
                    <UserText>{c.name}</UserText>
                  </label>
                </div>
              ))}
            </fieldset>
            <button type="submit" class="secondary">Save channels</button>
          </form>
        )
        : (
          <p>
            Alerts go by mail. <a href="/me/channels">Add a webhook channel</a>{" "}
            (Slack, Discord, ntfy or your own receiver).
          </p>
        )}
    </>
  );
}

/** The service's badge and its address. */
function BadgePart(
  { service: s, path, base }: { service: Service; path: string | null; base: string },
) {
  return (
    <>
      <h2>Badge</h2>
      {path
        ? (
          <>
            <p>
              <img src={path} alt={`Badge of ${s.name}`} />
            </p>
            <CopyField
              id="badge-url"
              label="Badge address (for a README)"
              value={`${base}${path}`}
            />
          </>
        )
        : <p>No badge address yet.</p>}
      <PostButton action={`/me/services/${s.id}/badge`} kind="secondary">
        {path ? "New badge address" : "Make a badge address"}
      </PostButton>
    </>
  );
}
