/**
 * What happened to a service, on its page (/me/services/<id>): the times it was down, the times
 * this monitor was not running, and its events log (a checked service's state changes, a
 * heartbeat's signals).
 */
import type { listEvents } from "../kv/service/heartbeats.ts";
import type { ServiceHistory } from "../kv/service/history.ts";
import { spanText } from "../kv/service/state.ts";
import type { OffPeriod } from "../lib/history.ts";
import { minutesText } from "../lib/svg.ts";
import { UserText } from "./_layout.tsx";
import { Ago, At } from "./_me.tsx";
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

/** The times the service was down, newest first, each with its length. */
export function ServiceIncidentsPart(props: { periods: OffPeriod[]; now: number }) {
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
 * When this monitor itself was not running (kv/service/monitor.ts), newest first: no data then,
 * neither up nor down.
 */
export function MonitorDownPart(props: { gaps: [number, number][]; now: number }) {
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
export function ChangesPart(props: { changes: ServiceHistory["changes"]; now: number }) {
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

export type ShownEvent = Awaited<ReturnType<typeof listEvents>>[number] & {
  duration_ms: number | null;
};

/** The signals of a heartbeat, newest first. */
export function EventsPart({ events, now }: { events: ShownEvent[]; now: number }) {
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
