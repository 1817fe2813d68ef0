/**
 * The watcher's dashboard (/watch) and what its live updates compare: every service of an
 * account with its state shown, filtered and paged, and for each row on the page its last
 * results (a check's stored results or a heartbeat's signals), its uptime over 24 hours and
 * 30 days, its response times, when it is next due and the channels it alerts. Problems first
 * (down, unreachable, late), then by name, or as the person sorts. A view over
 * kv/service/commands.ts, kv/service/history.ts, kv/service/heartbeats.ts, kv/service/maintenance.ts and kv/alerts/channels.ts: holds no
 * keys of its own.
 */
import { DAY } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { uptimeBetween } from "../../lib/history.ts";
import { listGaps } from "./monitor.ts";
import { fingerprint } from "../../lib/text.ts";
import { listEvents } from "./heartbeats.ts";
import { readChanges, recentResults } from "./history.ts";
import { listWindows, quietSpans, type Window } from "./maintenance.ts";
import {
  getBeat,
  getService,
  listServices,
  type Service,
  type ServiceView,
  serviceView,
} from "./commands.ts";
import { lastHeard, nextRunDue, type Pulse, shownState } from "./state.ts";
import { channelChoices } from "../alerts/channels.ts";
import { unreachableVia } from "./dependencies.ts";

/** Rows on one page of the dashboard: 300 services are six pages. */
const BOARD_PAGE = 50;
/** Results in a row's beat bar. */
const BEATS = 50;

export const SHOWN_STATES = [
  "ok",
  "warn",
  "off",
  "unreachable",
  "wait",
  "maintenance",
  "paused",
] as const;
type ShownState = typeof SHOWN_STATES[number];

/** The orders of the list: problems first (then by name), or by one column. */
export const BOARD_SORTS = ["problems", "name", "group", "kind", "last", "created"] as const;
export type BoardSort = typeof BOARD_SORTS[number];

/** Each kind in words, as the list shows it and its search finds it. */
export const KIND_WORDS: Record<string, string> = {
  url: "web address",
  mcp: "MCP server",
  tcp: "TCP port",
  tls: "TLS certificate",
  webhook: "heartbeat",
};

interface BoardFilter {
  state?: ShownState;
  group?: string;
  place?: string;
  /** Words matched in the name, description, group, place, kind and tags. */
  q?: string;
  /** Only services with this tag. */
  tag?: string;
  /** Absent: problems first. */
  sort?: BoardSort;
  /** From 1. */
  page?: number;
}

/** One result in a row's beat bar: a check's, or a heartbeat's success or failure signal. */
export interface BoardResult {
  at: number;
  state: "ok" | "warn" | "off";
  /** A check's duration; null for a signal. */
  ms: number | null;
  /** Its result in words ("ok", "failure, exit 2"). */
  what: string;
}

export interface BoardRow {
  view: ServiceView;
  shown: ShownState;
  /** Unreachable: the services it depends on that are off (kv/service/dependencies.ts). */
  via: string[];
  results: BoardResult[];
  uptime: { day: number | null; month: number | null };
  /** The last check or beat (ms), or null. */
  last: number | null;
  /** When the next check is due or the next run expected (ms); null: none (paused, not yet). */
  next: number | null;
  /** The channels it alerts besides mail, by name and kind. */
  channels: { name: string; kind: string }[];
}

export interface Board {
  now: number;
  /** Services of the account, and how many in each shown state. */
  total: number;
  counts: Record<ShownState, number>;
  /** The groups, places and tags the account's services use, for the filters. */
  groups: string[];
  places: string[];
  tags: string[];
  /** Services the filter matched, the page shown and the number of pages. */
  matched: number;
  page: number;
  pages: number;
  rows: BoardRow[];
  /** What the live updates compare (boardVersion). */
  version: string;
}

const words = (s: string) => s.toLowerCase().split(/\s+/).filter(Boolean);

function matches(v: ServiceView, shown: ShownState, f: BoardFilter): boolean {
  if (f.state && shown !== f.state) return false;
  if (f.group && v.group !== f.group) return false;
  if (f.place && v.place !== f.place) return false;
  if (f.tag && !v.tags.includes(f.tag)) return false;
  if (f.q) {
    const text = [v.name, v.what, v.group, v.place ?? "", v.kind, KIND_WORDS[v.kind] ?? ""]
      .concat(v.tags).join(" ").toLowerCase();
    if (!words(f.q).every((w) => text.includes(w))) return false;
  }
  return true;
}

/** Down first, then unreachable, then late; every other state after them. */
const PROBLEM_RANK: Partial<Record<ShownState, number>> = { off: 0, unreachable: 1, warn: 2 };
const rankOf = (s: ShownState) => PROBLEM_RANK[s] ?? 3;
const byName = (a: ServiceView, b: ServiceView) =>
  a.name.localeCompare(b.name, "en", { sensitivity: "base" }) || a.id - b.id;
const lastOf = (v: ServiceView) =>
  Date.parse((v.kind === "webhook" ? v.beat : v.checked) ?? "") || 0;

/** The list in the order asked for; names settle every tie. */
function sortList<T extends { view: ServiceView; shown: ShownState }>(xs: T[], sort: BoardSort) {
  const by: Record<BoardSort, (a: T, b: T) => number> = {
    problems: (a, b) => rankOf(a.shown) - rankOf(b.shown) || byName(a.view, b.view),
    name: (a, b) => byName(a.view, b.view),
    group: (a, b) => a.view.group.localeCompare(b.view.group, "en") || byName(a.view, b.view),
    kind: (a, b) => a.view.kind.localeCompare(b.view.kind) || byName(a.view, b.view),
    // The most recent first; never looked at last.
    last: (a, b) => lastOf(b.view) - lastOf(a.view) || byName(a.view, b.view),
    created: (a, b) => a.view.id - b.view.id,
  };
  return [...xs].sort(by[sort]);
}

/**
 * When a service is next looked at or expected: a check's next due time, a heartbeat's next
 * run due (kv/service/state.ts `nextRunDue`: after its last signal as judged, a resume and a
 * failure included, or the schedule's next time). Null when paused, or for a heartbeat on a
 * period that has not run yet (its first run starts the clock).
 */
export function nextExpected(
  s: Service,
  view: ServiceView,
  pulse: Pulse | null,
  now: number,
): number | null {
  if (view.paused) return null;
  if (s.kind !== "webhook") return s.due;
  return nextRunDue(s, pulse, now);
}

/** The account's services as shown, oldest first. */
async function shownServices(deps: Deps, account: number, now: number) {
  const windows = await listWindows(deps.kv, account);
  const views = (await listServices(deps.kv, account)).map(({ service, beat }) => ({
    service,
    beat,
    view: serviceView(service, beat, now, windows),
  }));
  // Off behind a service it depends on that is off: unreachable, not down.
  const behind = unreachableVia(views.map((x) => x.view));
  const list = views.map(({ service, beat, view }) => {
    const own = shownState(view) as ShownState;
    const via = own === "off" ? behind.get(view.id) ?? [] : [];
    return { service, beat, view, via, shown: via.length ? "unreachable" as const : own };
  });
  return { windows, list };
}

/** A short text that changes when any listed service's shown state changes. */
function versionOf(list: { view: ServiceView; shown: ShownState }[]): string {
  return `${list.length}-${fingerprint(list.map((x) => `${x.view.id}:${x.shown}`).join(";"))}`;
}

/**
 * The version of an account's states (one service's, with `service`): the live updates of the
 * dashboard and a service's page poll it and reload their parts when it changes.
 */
export async function boardVersion(
  deps: Deps,
  account: number,
  service?: number,
): Promise<string> {
  const { list } = await shownServices(deps, account, deps.clock.now());
  return versionOf(service === undefined ? list : list.filter((x) => x.view.id === service));
}

/** A heartbeat's success and failure signals as results (starts and logs left out). */
async function signalResults(deps: Deps, s: Service): Promise<BoardResult[]> {
  const events = await listEvents(deps.kv, s.account, s.id);
  const out: BoardResult[] = [];
  for (const e of events) {
    if (e.kind === "success") out.push({ at: e.at, state: "ok", ms: null, what: "success" });
    else if (e.kind === "fail") {
      const what = e.code !== null ? `failure, exit code ${e.code}` : "failure";
      out.push({ at: e.at, state: "off", ms: null, what });
    }
    if (out.length >= BEATS) break;
  }
  return out.reverse();
}

/** A service's last results (checks of the last 24 hours, or signals), oldest first. */
async function lastResults(deps: Deps, s: Service, now: number): Promise<BoardResult[]> {
  if (s.kind === "webhook") return await signalResults(deps, s);
  return (await recentResults(deps.kv, s.account, s.id, now)).map((r) => ({
    at: r.at,
    state: r.state,
    ms: r.ms,
    what: r.state === "ok" ? "ok" : r.state === "warn" ? "slow or warning" : "failed",
  }));
}

async function boardRow(
  deps: Deps,
  channels: Map<number, { name: string; kind: string }>,
  s: Service,
  beat: Pulse | null,
  view: ServiceView,
  shown: ShownState,
  via: string[],
  windows: Window[],
  gaps: [number, number][],
  now: number,
): Promise<BoardRow> {
  const [history, results] = await Promise.all([
    readChanges(deps.kv, s.account, s.id, now, 30),
    lastResults(deps, s, now),
  ]);
  const quiet = quietSpans(windows, s, now - 30 * DAY, now);
  const span = (from: number) => uptimeBetween({ ...history, from, to: now, quiet, gaps });
  const heard = Math.max(lastHeard(view, beat) ?? 0, results.at(-1)?.at ?? 0);
  return {
    view,
    shown,
    via,
    results: results.slice(-BEATS),
    uptime: { day: span(now - DAY), month: span(now - 30 * DAY) },
    last: heard || null,
    next: nextExpected(s, view, beat, now),
    channels: view.channels.map((id) => channels.get(id)).filter((c) => c !== undefined),
  };
}

/**
 * The names of the services `s` depends on that are off now, when it is off itself (one
 * service's page): "unreachable (<those> off)".
 */
export async function parentsOff(
  deps: Deps,
  s: Service,
  now: number,
  windows: Window[],
): Promise<string[]> {
  const ids = s.depends_on ?? [];
  if (!ids.length) return [];
  const own = serviceView(s, s.kind === "webhook" ? await getBeat(deps.kv, s) : null, now, windows);
  if (own.state !== "off") return [];
  const parents = (await Promise.all(ids.map((id) => getService(deps.kv, s.account, id))))
    .map((e) => e.value).filter((p): p is Service => p !== null);
  const views = await Promise.all(
    parents.map(async (p) => serviceView(p, await getBeat(deps.kv, p), now, windows)),
  );
  return views.filter((v) => v.state === "off").map((v) => v.name);
}

/** The dashboard of an account: counts, the filter's matches and one page of rows. */
export async function watchBoard(deps: Deps, account: number, f: BoardFilter): Promise<Board> {
  const now = deps.clock.now();
  const { windows, list } = await shownServices(deps, account, now);
  const counts = Object.fromEntries(SHOWN_STATES.map((s) => [s, 0])) as Record<ShownState, number>;
  for (const x of list) counts[x.shown]++;
  const found = sortList(list.filter((x) => matches(x.view, x.shown, f)), f.sort ?? "problems");
  const pages = Math.max(1, Math.ceil(found.length / BOARD_PAGE));
  const page = Math.min(Math.max(1, f.page ?? 1), pages);
  // The monitor's own downtime is the same for every row: read once.
  const [gaps, choices] = await Promise.all([
    listGaps(deps.kv, now - 30 * DAY, now),
    channelChoices(deps.kv, account),
  ]);
  const channels = new Map(choices.map((c) => [c.id, { name: c.name, kind: c.kind }]));
  const rows = await Promise.all(
    found.slice((page - 1) * BOARD_PAGE, page * BOARD_PAGE)
      .map((x) =>
        boardRow(deps, channels, x.service, x.beat, x.view, x.shown, x.via, windows, gaps, now)
      ),
  );
  const sorted = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => !!x))].sort();
  return {
    now,
    total: list.length,
    counts,
    groups: sorted(list.map((x) => x.view.group)),
    places: sorted(list.map((x) => x.view.place)),
    tags: sorted(list.flatMap((x) => x.view.tags)),
    matched: found.length,
    page,
    pages,
    rows,
    version: versionOf(list),
  };
}
