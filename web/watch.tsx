/**
 * The watcher's dashboard (/watch): every service as one line of a table (two on a phone) with
 * its state in colour, icon and word, its tags, kind and timing, the last and next check or
 * run, uptime over 24 hours, the beat bar of its last results and the ways it alerts; what a
 * phone drops, and the rest (30 days, response times, status), in the row's details. Problems
 * first, then by name, or sorted by a column; filters by state, group, place and tag, a search
 * box, 50 rows a page. The filters are a GET form, so the page works without script;
 * web/static/live.js reloads its parts when a state changes (it polls GET /watch/live, the
 * version of the account's states: kv/service/dashboard.ts boardVersion).
 */
import { raw } from "hono/html";
import { z } from "zod";
import {
  type Board,
  BOARD_SORTS,
  type BoardResult,
  type BoardRow,
  type BoardSort,
  boardVersion,
  KIND_WORDS,
  SHOWN_STATES,
  watchBoard,
} from "../kv/service/dashboard.ts";
import type { Deps } from "../lib/deps.ts";
import { beatBar, percentText, sparkline } from "../lib/svg.ts";
import { periodWords } from "../lib/timing_words.ts";
import { MIN_MEASURED_MS } from "../lib/history.ts";
import { MINUTE } from "../lib/clock.ts";
import { UserText } from "./_layout.tsx";
import { displayText } from "../lib/display.ts";
import { Ago, Due, when } from "./_me.tsx";
import { AlertWays, STATE_TEXT, StateBadge } from "./_state.tsx";
import { unreachableWords } from "../kv/service/dependencies.ts";
import { requireAccount, type WebCtx, webRouter } from "./_web.tsx";
import { liveAnswer } from "./_live.ts";

const blank = (v: unknown) => (v === "" ? undefined : v);
const BoardQuery = z.object({
  state: z.preprocess(blank, z.enum(SHOWN_STATES).optional()).catch(undefined),
  group: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  place: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  tag: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  q: z.preprocess(blank, z.string().max(200).optional()).catch(undefined),
  sort: z.preprocess(blank, z.enum(BOARD_SORTS).optional()).catch(undefined),
  page: z.coerce.number().int().min(1).max(10_000).optional().catch(undefined),
});
type Query = z.infer<typeof BoardQuery>;
/** The query's filters an address of the list keeps. */
const QUERY_KEYS: (keyof Query)[] = ["q", "state", "group", "place", "tag", "sort"];

/** The dashboard's address with these filters (and `change` over them). */
function boardHref(q: Query, change: Partial<Record<keyof Query, string | undefined>> = {}) {
  const p = new URLSearchParams();
  for (const k of QUERY_KEYS) {
    const v = k in change ? change[k] : q[k];
    if (v) p.set(k, String(v));
  }
  if (change.page) p.set("page", change.page);
  const text = p.toString();
  return text ? `/watch?${text}` : "/watch";
}

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

function Tags({ tags, q }: { tags: string[]; q: Query }) {
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

function Row({ row, now, q }: { row: BoardRow; now: number; q: Query }) {
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
            {v.status
              ? (
                <>
                  <dt>Status</dt>
                  <dd>
                    <UserText>{v.status}</UserText>
                  </dd>
                </>
              )
              : null}
            <dt>Group</dt>
            <dd>
              <UserText>{v.group}</UserText>
              {v.place
                ? (
                  <>
                    {" · "}
                    <UserText>{v.place}</UserText>
                  </>
                )
                : null}
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

const STATE_FILTER_WORDS: Record<string, string> = {
  ok: "Up",
  warn: "Warning",
  off: "Down",
  unreachable: "Unreachable",
  wait: "Waiting",
  maintenance: "Maintenance",
  paused: "Paused",
};

const SORT_WORDS: Record<BoardSort, string> = {
  problems: "Problems first",
  name: "Name",
  group: "Group",
  kind: "Kind",
  last: "Last heard",
  created: "Oldest first",
};

function Filters({ board, q }: { board: Board; q: Query }) {
  const option = (value: string, label: string, chosen?: string) => (
    <option value={value} selected={chosen === value}>{label}</option>
  );
  const narrowed = !!(q.state || q.group || q.place || q.tag || q.sort);
  return (
    <form method="get" action="/watch" class="filters board-filters" role="search">
      <div class="field">
        <label for="f-q">Search services</label>
        <input id="f-q" type="search" name="q" maxlength={200} value={q.q ?? ""} />
      </div>
      <details class="more-filters" open={narrowed}>
        <summary>Filter and sort</summary>
        <div class="filters">
          <div class="field">
            <label for="f-state">State</label>
            <select id="f-state" name="state">
              {option("", "All states", q.state ?? "")}
              {SHOWN_STATES.map((s) =>
                option(s, `${STATE_FILTER_WORDS[s]} (${board.counts[s]})`, q.state)
              )}
            </select>
          </div>
          <div class="field">
            <label for="f-group">Group</label>
            <select id="f-group" name="group">
              {option("", "All groups", q.group ?? "")}
              {board.groups.map((g) => option(g, g, q.group))}
            </select>
          </div>
          {board.places.length
            ? (
              <div class="field">
                <label for="f-place">Place</label>
                <select id="f-place" name="place">
                  {option("", "All places", q.place ?? "")}
                  {board.places.map((p) => option(p, p, q.place))}
                </select>
              </div>
            )
            : null}
          {board.tags.length
            ? (
              <div class="field">
                <label for="f-tag">Tag</label>
                <select id="f-tag" name="tag">
                  {option("", "All tags", q.tag ?? "")}
                  {board.tags.map((t) => option(t, t, q.tag))}
                </select>
              </div>
            )
            : null}
          <div class="field">
            <label for="f-sort">Sort by</label>
            <select id="f-sort" name="sort">
              {BOARD_SORTS.map((s) => option(s, SORT_WORDS[s], q.sort ?? "problems"))}
            </select>
          </div>
        </div>
      </details>
      <div class="field">
        <button type="submit">Show</button>
      </div>
    </form>
  );
}

/** The counts of each state, each a link to its filter; the tag chosen, with its way out. */
function Summary({ board, q }: { board: Board; q: Query }) {
  const shown = SHOWN_STATES.filter((s) => board.counts[s] > 0);
  const filtered = board.matched !== board.total;
  return (
    <div class="board-summary">
      <ul class="inline summary" aria-label="Services by state">
        {shown.map((s) => (
          <li>
            <a href={`/watch?state=${s}`} class={`tag state state-${s}`}>
              {board.counts[s]} {STATE_TEXT[s]}
            </a>
          </li>
        ))}
        {q.tag
          ? (
            <li>
              Tagged{" "}
              <span class="chip">
                <UserText>{q.tag}</UserText>
              </span>{" "}
              <a href={boardHref(q, { tag: undefined })}>Show every tag</a>
            </li>
          )
          : null}
      </ul>
      <p role="status" class="meta">
        {filtered
          ? `${board.matched} of ${board.total} services match.`
          : `${board.total} service${board.total === 1 ? "" : "s"}.`}
      </p>
    </div>
  );
}

function Pages({ board, q }: { board: Board; q: Query }) {
  if (board.pages <= 1) return null;
  const href = (page: number) => boardHref(q, { page: String(page) });
  return (
    <nav aria-label="Pages of services" class="pages">
      <ul class="inline">
        {board.page > 1
          ? (
            <li>
              <a href={href(board.page - 1)} rel="prev">Previous page</a>
            </li>
          )
          : null}
        <li>Page {board.page} of {board.pages}</li>
        {board.page < board.pages
          ? (
            <li>
              <a href={href(board.page + 1)} rel="next">Next page</a>
            </li>
          )
          : null}
      </ul>
    </nav>
  );
}

/** A column's heading; a link that sorts by it when it has an order. */
function Head(
  { q, sort, label, cls }: { q: Query; sort?: BoardSort; label: string; cls: string },
) {
  const current = (q.sort ?? "problems") === sort;
  return (
    <th scope="col" class={cls} aria-sort={sort && current ? "ascending" : undefined}>
      {sort && !current ? <a href={boardHref(q, { sort, page: undefined })}>{label}</a> : label}
    </th>
  );
}

function BoardTable({ board, q }: { board: Board; q: Query }) {
  return (
    <table class="watchlist">
      <caption class="visually-hidden">
        Your services, {SORT_WORDS[q.sort ?? "problems"].toLowerCase()}
      </caption>
      <thead>
        <tr>
          <Head q={q} sort="problems" label="State" cls="c-state" />
          <Head q={q} sort="name" label="Service" cls="c-name" />
          <Head q={q} label="Tags" cls="c-tags wide-only" />
          <Head q={q} sort="kind" label="Kind" cls="c-kind wide-only" />
          <Head q={q} label="Every" cls="c-every wide-only" />
          <Head q={q} sort="last" label="Last" cls="c-last" />
          <Head q={q} label="Next" cls="c-next" />
          <Head q={q} label="24 h" cls="c-up" />
          <Head q={q} label="Recent" cls="c-beats" />
          <Head q={q} label="Alerts" cls="c-ways wide-only" />
          <th scope="col" class="c-more">
            <span class="visually-hidden">Details</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {board.rows.map((row) => <Row row={row} now={board.now} q={q} />)}
      </tbody>
    </table>
  );
}

/** The parts live.js replaces when a state changes. */
function BoardParts({ board, q }: { board: Board; q: Query }) {
  const filtered = board.matched !== board.total;
  return (
    <div id="board" data-live-part="">
      <Summary board={board} q={q} />
      {board.rows.length ? <BoardTable board={board} q={q} /> : filtered
        ? (
          <p>
            No service matches. <a href="/watch">Show all services</a>
          </p>
        )
        : null}
      <Pages board={board} q={q} />
    </div>
  );
}

async function getWatch(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const q = BoardQuery.parse(c.req.query());
  const board = await watchBoard(deps, me.id, q);
  c.header("Cache-Control", "no-store");
  return c.render(
    <>
      <div class="board-top">
        <h1>Watching</h1>
        <ul class="actions">
          <li>
            <a href="/me/services/new" class="button">Add a service</a>
          </li>
          <li>
            <a href="/me/status-page">Status page</a>
          </li>
          <li>
            <a href="/me/maintenance">Maintenance windows</a>
          </li>
          <li>
            <a href="/me/reports">Uptime reports</a>
          </li>
          <li>
            <a href="/me/channels">Alert channels</a>
          </li>
        </ul>
      </div>
      {board.total === 0
        ? (
          <p class="lede">
            Your websites, servers and cron jobs, checked and alerting you. Nothing watched yet: add
            the first.
          </p>
        )
        : <Filters board={board} q={q} />}
      <div data-live="/watch/live" data-version={board.version}>
        <BoardParts board={board} q={q} />
      </div>
    </>,
    { title: "Watching", noindex: true, scripts: ["live.js"], wide: true },
  );
}

/** The version of an account's states (one service's with `?service=`): web/_live.ts. */
function getWatchLive(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const one = Number(c.req.query("service"));
  const service = Number.isSafeInteger(one) && one > 0 ? one : undefined;
  return liveAnswer(c, () => boardVersion(deps, me.id, service));
}

export function watchBoardPages(deps: Deps) {
  const app = webRouter();

  app.get("/watch", (c) => getWatch(deps, c));

  app.get("/watch/live", (c) => getWatchLive(deps, c));

  return app;
}
