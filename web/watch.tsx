/**
 * The watcher's dashboard (/watch): every service as a row (a card on a phone) with its state
 * in colour, icon and word, the beat bar of its last results, uptime over 24 hours and 30
 * days, response times and the last check or beat; filters by state, group and place, a search
 * box, 50 rows a page. The filters are a GET form, so the page works without script;
 * web/static/live.js reloads its parts when a state changes (it polls GET /watch/live, the
 * version of the account's states: kv/service/dashboard.ts boardVersion).
 */
import { raw } from "hono/html";
import { z } from "zod";
import {
  type Board,
  type BoardResult,
  type BoardRow,
  boardVersion,
  SHOWN_STATES,
  watchBoard,
} from "../kv/service/dashboard.ts";
import type { Deps } from "../lib/deps.ts";
import { beatBar, percentText, sparkline } from "../lib/svg.ts";
import { U } from "./_layout.tsx";
import { Ago, when } from "./_me.tsx";
import { NobodyTold, STATE_TEXT, StateBadge } from "./_state.tsx";
import { unreachableWords } from "../kv/service/dependencies.ts";
import { requireAccount, type WebCtx, webRouter } from "./_web.tsx";
import { liveAnswer } from "./_live.ts";

const blank = (v: unknown) => (v === "" ? undefined : v);
const BoardQuery = z.object({
  state: z.preprocess(blank, z.enum(SHOWN_STATES).optional()).catch(undefined),
  group: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  place: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  q: z.preprocess(blank, z.string().max(200).optional()).catch(undefined),
  page: z.coerce.number().int().min(1).max(10_000).optional().catch(undefined),
});
type Query = z.infer<typeof BoardQuery>;

const KIND_WORDS: Record<string, string> = {
  url: "web address",
  mcp: "MCP server",
  tcp: "TCP port",
  tls: "TLS certificate",
  webhook: "heartbeat",
};

/** A result's words for its bar: the exact time, then how it went. */
const resultLabel = (r: BoardResult) =>
  `${when(r.at)}: ${r.what}${r.ms !== null ? `, ${r.ms} ms` : ""}`;

const uptimeText = (u: number | null) => (u === null ? "not measured yet" : percentText(u));

function Row({ row, now }: { row: BoardRow; now: number }) {
  const v = row.view;
  const hb = v.kind === "webhook";
  const times = row.results.filter((r) => r.ms !== null).map((r) => r.ms!);
  const spark = hb ? null : sparkline(
    times.slice(-50),
    `Response time of the last ${Math.min(50, times.length)} checks, the last ${times.at(-1)} ms`,
  );
  const failed = row.results.filter((r) => r.state !== "ok").length;
  return (
    <li class={`svc svc-${row.shown}`}>
      <div class="svc-name">
        <StateBadge state={row.shown} />
        <h2>
          <a href={`/me/services/${v.id}`}>
            <U>{v.name}</U>
          </a>
        </h2>
        {row.via.length
          ? (
            <p class="meta">
              <U>{unreachableWords(row.via)}</U>
            </p>
          )
          : null}
        <p class="meta">
          {KIND_WORDS[v.kind] ?? v.kind} · <U>{v.group}</U>
          {v.place
            ? (
              <>
                {" · "}
                <U>{v.place}</U>
              </>
            )
            : null}
        </p>
        <NobodyTold alerts={v.alerts} />
      </div>
      <div class="svc-beats">
        {row.results.length
          ? raw(beatBar(
            row.results.map((r) => ({ at: r.at, tone: r.state, label: resultLabel(r) })),
            {
              label: `Last ${row.results.length} ${hb ? "runs" : "checks"} of ${v.name}: ${
                row.results.length - failed
              } good, ${failed} not`,
            },
          ))
          : <p class="meta">No {hb ? "runs" : "checks"} yet</p>}
      </div>
      <dl class="svc-figures">
        <div>
          <dt>24 h</dt>
          <dd>{uptimeText(row.uptime.day)}</dd>
        </div>
        <div>
          <dt>30 days</dt>
          <dd>{uptimeText(row.uptime.month)}</dd>
        </div>
        {hb ? null : (
          <div>
            <dt>Response</dt>
            <dd>
              {spark ? raw(spark) : null}
              {v.ms !== null ? ` ${v.ms} ms` : " none yet"}
            </dd>
          </div>
        )}
        <div>
          <dt>{hb ? "Last beat" : "Last check"}</dt>
          <dd>
            <Ago at={row.last} now={now} />
          </dd>
        </div>
      </dl>
    </li>
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

function Filters({ board, q }: { board: Board; q: Query }) {
  const option = (value: string, label: string, chosen?: string) => (
    <option value={value} selected={chosen === value}>{label}</option>
  );
  return (
    <form method="get" action="/watch" class="filters board-filters" role="search">
      <div class="field">
        <label for="f-q">Search services</label>
        <input id="f-q" type="search" name="q" maxlength={200} value={q.q ?? ""} />
      </div>
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
      <div class="field">
        <button type="submit">Show</button>
      </div>
    </form>
  );
}

/** The counts of each state, each a link to its filter. */
function Summary({ board }: { board: Board }) {
  const shown = SHOWN_STATES.filter((s) => board.counts[s] > 0);
  return (
    <ul class="inline summary" aria-label="Services by state">
      {shown.map((s) => (
        <li>
          <a href={`/watch?state=${s}`} class={`tag state state-${s}`}>
            {board.counts[s]} {STATE_TEXT[s]}
          </a>
        </li>
      ))}
    </ul>
  );
}

function Pages({ board, q }: { board: Board; q: Query }) {
  if (board.pages <= 1) return null;
  const href = (page: number) => {
    const p = new URLSearchParams();
    for (const k of ["q", "state", "group", "place"] as const) if (q[k]) p.set(k, q[k]!);
    p.set("page", String(page));
    return `/watch?${p}`;
  };
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

/** The parts live.js replaces when a state changes. */
function BoardParts({ board, q }: { board: Board; q: Query }) {
  const filtered = board.matched !== board.total;
  return (
    <div id="board" data-live-part="">
      <Summary board={board} />
      <p role="status" class="meta">
        {filtered
          ? `${board.matched} of ${board.total} services match.`
          : `${board.total} service${board.total === 1 ? "" : "s"}.`}
      </p>
      {board.rows.length
        ? (
          <ul class="board">
            {board.rows.map((row) => <Row row={row} now={board.now} />)}
          </ul>
        )
        : filtered
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
      <h1>Watching</h1>
      <p class="lede">
        Your websites, servers and cron jobs, checked and alerting you.{" "}
        {board.total === 0 ? "Nothing watched yet: add the first." : null}
      </p>
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
      {board.total ? <Filters board={board} q={q} /> : null}
      <div data-live="/watch/live" data-version={board.version}>
        <BoardParts board={board} q={q} />
      </div>
    </>,
    { title: "Watching", noindex: true, scripts: ["live.js"] },
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
