/**
 * The watch list's page (/watch): the filters, then the parts live.js replaces when a state
 * changes (the counts, the table of services with its sorting headings, the page links).
 */
import { type Board, type BoardSort, watchBoard } from "../kv/service/dashboard.ts";
import type { Deps } from "../lib/deps.ts";
import { requireAccount, type WebCtx } from "./_web.tsx";
import {
  BoardFilters,
  boardHref,
  BoardPageLinks,
  BoardQuery,
  BoardSummary,
  SORT_WORDS,
  type WatchQuery,
} from "./_watch_board_filters.tsx";
import { WatchedRow } from "./_watch_board_row.tsx";
import { LinkItems } from "./_layout.tsx";

/** A column's heading; a link that sorts by it when it has an order. */
function Head(
  { q, sort, label, cls }: { q: WatchQuery; sort?: BoardSort; label: string; cls: string },
) {
  const current = (q.sort ?? "problems") === sort;
  return (
    <th scope="col" class={cls} aria-sort={sort && current ? "ascending" : undefined}>
      {sort && !current ? <a href={boardHref(q, { sort, page: undefined })}>{label}</a> : label}
    </th>
  );
}

function BoardTable({ board, q }: { board: Board; q: WatchQuery }) {
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
        {board.rows.map((row) => <WatchedRow row={row} now={board.now} q={q} />)}
      </tbody>
    </table>
  );
}

/** The parts live.js replaces when a state changes. */
function BoardParts({ board, q }: { board: Board; q: WatchQuery }) {
  const filtered = board.matched !== board.total;
  return (
    <div id="board" data-live-part="">
      <BoardSummary board={board} q={q} />
      {board.rows.length ? <BoardTable board={board} q={q} /> : filtered
        ? (
          <p>
            No service matches. <a href="/watch">Show all services</a>
          </p>
        )
        : null}
      <BoardPageLinks board={board} q={q} />
    </div>
  );
}

/** The dashboard's links to the pages about all services, beside "Add a service". */
const BOARD_LINKS: [string, string][] = [
  ["/me/status-page", "Status page"],
  ["/me/maintenance", "Maintenance windows"],
  ["/me/reports", "Uptime reports"],
  ["/me/channels", "Alert channels"],
];

/** GET /watch: the page as the query asks for it, never cached (its states change). */
export async function getWatch(deps: Deps, c: WebCtx) {
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
          <LinkItems links={BOARD_LINKS} />
        </ul>
      </div>
      {board.total === 0
        ? (
          <p class="lede">
            Your websites, servers and cron jobs, checked and alerting you. Nothing watched yet: add
            the first.
          </p>
        )
        : <BoardFilters board={board} q={q} />}
      <div data-live="/watch/live" data-version={board.version}>
        <BoardParts board={board} q={q} />
      </div>
    </>,
    { title: "Watching", noindex: true, scripts: ["live.js"], wide: true },
  );
}
