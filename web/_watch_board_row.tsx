/**
 * One service as a line of the watch list (/watch; two lines on a phone): its state, name, tags,
 * kind and timing, the last and next check or run, uptime over 24 hours, the beat bar of its last
 * results and the ways it alerts; what a phone drops, and the rest, in the row's details.
 */
import { raw } from "hono/html";
import { Fact } from "./_fact.tsx";
import { type BoardResult, type BoardRow, KIND_WORDS } from "../kv/service/dashboard.ts";
import { beatBar, percentText, sparkline } from "../lib/svg.ts";
import { periodWords } from "../lib/timing_words.ts";
import { MIN_MEASURED_MS } from "../lib/history.ts";
import { MINUTE } from "../lib/clock.ts";
import { AfterDot, UserText } from "./_layout.tsx";
import { displayText } from "../lib/display.ts";
import { Ago, Due, when } from "./_me.tsx";
import { AlertWays, StateBadge } from "./_state.tsx";
import { unreachableWords } from "../kv/service/dependencies.ts";
import { boardHref, type WatchQuery } from "./_watch_board_filters.tsx";

/** Results in a row's beat bar: the last 20 (the service's page shows more). */
const ROW_BEATS = 20;

/** A result's words for its bar: the exact time, then how it went. */
const resultLabel = (r: BoardResult) =>
  `${when(r.at)}: ${r.what}${r.ms !== null ? `, ${r.ms} ms` : ""}`;

/** A figure that does not exist yet: a dash, with why on hover and for screen readers. */
function None({ why }: { why: string }) {
  return <span class="none" role="img" aria-label={why} title={why}>—</span>;
}

function Uptime({ value, why }: { value: number | null; why: string }) {
  return value === null ? <None why={why} /> : <>{percentText(value)}</>;
}

/** Why a service has no uptime figure yet, in one sentence. */
function notYet(row: BoardRow): string {
  const v = row.view;
  if (v.paused) return "Paused: nothing is measured while it is paused";
  if (row.last !== null) return `Measured for less than ${MIN_MEASURED_MS / MINUTE} minutes so far`;
  return v.kind === "webhook"
    ? "No figure yet: it comes with the first ping"
    : "No figure yet: it comes with the first check";
}

function Tags({ tags, q }: { tags: string[]; q: WatchQuery }) {
  if (!tags.length) return null;
  return (
    <ul class="chips" aria-label="Tags">
      {tags.map((t) => (
        <li>
          <a href={boardHref(q, { tag: t, page: undefined })} class="chip" title={`Only ${t}`}>
            <UserText>{t}</UserText>
          </a>
        </li>
      ))}
    </ul>
  );
}

export function WatchedRow({ row, now, q }: { row: BoardRow; now: number; q: WatchQuery }) {
  const v = row.view;
  const hb = v.kind === "webhook";
  const why = notYet(row);
  const times = row.results.filter((r) => r.ms !== null).map((r) => r.ms!);
  const spark = hb ? null : sparkline(
    times.slice(-50),
    `Response time of the last ${Math.min(50, times.length)} checks, the last ${times.at(-1)} ms`,
  );
  const beats = row.results.slice(-ROW_BEATS);
  const failed = beats.filter((r) => r.state !== "ok").length;
  const every = periodWords(v);
  const kind = KIND_WORDS[v.kind] ?? v.kind;
  const via = row.via.length ? unreachableWords(row.via) : null;
  return (
    <tr class={`watched watched-${row.shown}`}>
      <td class="c-state" data-label="State">
        <StateBadge state={row.shown} />
      </td>
      <th scope="row" class="c-name">
        <a href={`/me/services/${v.id}`} title={v.name}>
          <UserText>{v.name}</UserText>
        </a>
        {via
          ? (
            <span class="via">
              {" "}
              <UserText>{via}</UserText>
            </span>
          )
          : null}
      </th>
      <td class="c-tags wide-only" data-label="Tags">
        <Tags tags={v.tags} q={q} />
      </td>
      <td class="c-kind wide-only" data-label="Kind">{kind}</td>
      <td class="c-every wide-only" data-label="Every" title={every}>{every}</td>
      <td class="c-last" data-label="Last">
        {row.last === null ? <None why={why} /> : <Ago at={row.last} now={now} />}
      </td>
      <td class="c-next" data-label="Next">
        {row.next === null
          ? (
            <None
              why={v.paused
                ? "Paused: nothing is expected"
                : "Expected one period after its first ping"}
            />
          )
          : <Due at={row.next} now={now} />}
      </td>
      <td class="c-up" data-label="24 h">
        <Uptime value={row.uptime.day} why={why} />
      </td>
      <td class="c-beats" data-label={hb ? "Last runs" : "Last checks"}>
        {beats.length
          ? raw(beatBar(
            beats.map((r) => ({ at: r.at, tone: r.state, label: resultLabel(r) })),
            {
              slots: ROW_BEATS,
              label: `Last ${beats.length} ${hb ? "runs" : "checks"} of ${v.name}: ${
                beats.length - failed
              } good, ${failed} not`,
            },
          ))
          : <None why={hb ? "No runs yet" : "No checks yet"} />}
      </td>
      <td class="c-ways wide-only" data-label="Alerts">
        <AlertWays alerts={v.alerts} channels={row.channels} short />
      </td>
      <td class="c-more">
        <details>
          <summary aria-label={`More about ${displayText(v.name)}`}>More</summary>
          <dl>
            <Fact term="Status" show={v.status}>
              <UserText>{v.status}</UserText>
            </Fact>
            <dt>Group</dt>
            <dd>
              <UserText>{v.group}</UserText>
              <AfterDot text={v.place} />
            </dd>
            <div class="narrow-only">
              <dt>Kind</dt>
              <dd>{kind}, {every}</dd>
              {v.tags.length
                ? (
                  <>
                    <dt>Tags</dt>
                    <dd>
                      <Tags tags={v.tags} q={q} />
                    </dd>
                  </>
                )
                : null}
              <dt>Alerts</dt>
              <dd>
                <AlertWays alerts={v.alerts} channels={row.channels} />
              </dd>
            </div>
            <dt>30 days</dt>
            <dd>{row.uptime.month === null ? why : percentText(row.uptime.month)}</dd>
            {hb ? null : (
              <>
                <dt>Response</dt>
                <dd>
                  {spark ? raw(spark) : null}
                  {v.ms !== null ? ` ${v.ms} ms` : " none yet"}
                </dd>
              </>
            )}
          </dl>
        </details>
      </td>
    </tr>
  );
}
