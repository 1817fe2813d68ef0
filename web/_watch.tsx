/**
 * The monitoring parts of a service's page (/me/services/<id>): 90 daily bars and uptime,
 * the response-time chart (checked kinds), the last heartbeat events, the alert channels it
 * uses and its badge. Drawn on the server (lib/svg.ts); no script, no inline style.
 */
import { raw } from "hono/html";
import { listChannels } from "../kv/channels.ts";
import { serviceHistory, serviceMaintenance } from "../kv/windows.ts";
import { listEvents } from "../kv/hooks.ts";
import type { Service, ServiceView } from "../kv/services.ts";
import { spanText } from "../kv/service_state.ts";
import type { Deps } from "../lib/deps.ts";
import { withDurations } from "../lib/runs.ts";
import { percentText, responseChart, uptimeBars } from "../lib/svg.ts";
import { U } from "./_layout.tsx";
import { when } from "./_me.tsx";

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

/** The page's monitoring sections for one service. */
export async function watchSection(deps: Deps, s: Service, view: ServiceView) {
  const now = deps.clock.now();
  const h = await serviceHistory(deps.kv, s, now);
  const up = h.uptime.all;
  const hb = s.kind === "webhook";
  const events = hb ? withDurations(await listEvents(deps.kv, s.account, s.id)) : [];
  const channels = await listChannels(deps.kv, s.account);
  const chosen = new Set(s.channels ?? []);
  const quiet = await serviceMaintenance(deps.kv, s, now);
  return (
    <>
      {quiet === null ? null : (
        <p class="notice" role="status">
          <span class="tag state-maintenance">Maintenance</span> Under maintenance until{" "}
          {when(quiet)}: failures alert nobody; a failure that lasts past the end alerts then.{" "}
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
      <h2>Last 90 days</h2>
      <p>
        Uptime: {uptimeWords(up)}{" "}
        <span class="hint">(each bar is a day, the newest on the right)</span>
      </p>
      <figure>
        {raw(uptimeBars(h.days))}
        <figcaption class="hint">
          Green: never down that day; yellow: down for less than an hour; red: down for an hour or
          more; blue: all day in maintenance; grey: no data.
        </figcaption>
      </figure>
      {hb ? null : (
        <>
          <h3>Response time</h3>
          <figure>
            {raw(responseChart(h.days))}
            <figcaption class="hint">
              Blue: median check time per day; yellow: 95th percentile.
            </figcaption>
          </figure>
        </>
      )}
      {h.changes.length
        ? (
          <details>
            <summary>State changes ({h.changes.length})</summary>
            <ul>
              {h.changes.slice(-50).reverse().map((c) => (
                <li>
                  {when(c.at)}: {c.state} — <U>{c.status}</U>
                </li>
              ))}
            </ul>
          </details>
        )
        : null}
      {hb ? <EventsPart events={events} /> : null}
      <ChannelsPart service={s.id} channels={channels} chosen={chosen} />
      <BadgePart service={s} path={view.badge_path} base={deps.config.baseUrl} />
    </>
  );
}

type ShownEvent = Awaited<ReturnType<typeof listEvents>>[number] & { duration_ms: number | null };

/** The signals of a heartbeat, newest first. */
function EventsPart({ events }: { events: ShownEvent[] }) {
  return (
    <>
      <h2>Events</h2>
      {events.length
        ? (
          <table>
            <caption>The last {events.length} signals, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Signal</th>
                <th scope="col">Took</th>
                <th scope="col">Status</th>
                <th scope="col">Log</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <tr>
                  <td>{when(e.at)}</td>
                  <td>
                    {KIND_WORDS[e.kind]}
                    {e.code !== null ? ` (exit ${e.code})` : ""}
                  </td>
                  <td>{duration(e.duration_ms)}</td>
                  <td>
                    <U>{e.status}</U>
                  </td>
                  <td>
                    {e.body
                      ? (
                        <details>
                          <summary>Show the log</summary>
                          <pre>{e.body}</pre>
                        </details>
                      )
                      : "none"}
                  </td>
                  <td>{e.origin}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
        : <p>No signals yet.</p>}
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
                    <U>{c.name}</U>
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
            <p>
              <label for="badge-url">Badge address (for a README)</label>
              <input id="badge-url" readonly value={`${base}${path}`} />
              <button type="button" data-copy="#badge-url" hidden>Copy</button>
            </p>
          </>
        )
        : <p>No badge address yet.</p>}
      <form method="post" action={`/me/services/${s.id}/badge`} class="inline">
        <button type="submit" class="secondary">
          {path ? "New badge address" : "Make a badge address"}
        </button>
      </form>
    </>
  );
}
