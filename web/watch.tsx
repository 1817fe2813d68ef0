/**
 * The watcher's dashboard (/watch): every service as one line of a table (two on a phone) with
 * its state in colour, icon and word, its tags, kind and timing, the last and next check or
 * run, uptime over 24 hours, the beat bar of its last results and the ways it alerts; what a
 * phone drops, and the rest (30 days, response times, status), in the row's details. Problems
 * first, then by name, or sorted by a column; filters by state, group, place and tag, a search
 * box, 50 rows a page. The filters are a GET form, so the page works without script;
 * web/static/live.js reloads its parts when a state changes (it polls GET /watch/live, the
 * version of the account's states: kv/service/dashboard.ts boardVersion).
 * This file holds the routes; the page is web/_watch_board.tsx, a service's row
 * web/_watch_board_row.tsx, the query, the filters, the counts and the page links
 * web/_watch_board_filters.tsx.
 */
import { boardVersion } from "../kv/service/dashboard.ts";
import type { Deps } from "../lib/deps.ts";
import { requireAccount, type WebCtx, webRouter } from "./_web.tsx";
import { liveAnswer } from "./_live.ts";
import { getWatch } from "./_watch_board.tsx";

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
