import type { Deps } from "../lib/deps.ts";
import { invalid } from "../lib/errors.ts";
import { fingerprint } from "../lib/text.ts";
import { type Account, accountBySlug, avatarUrl } from "./accounts.ts";
import { serviceHistory, serviceMaintenance } from "./windows.ts";
import { listWindows, maintenanceUntil, type Window } from "./maintenance.ts";
import {
  getService,
  listServices,
  type Service,
  serviceByBadge,
  shownVerdict,
  type State,
} from "./services.ts";
import { getPulse } from "./hooks.ts";
import { listNotes, noteView } from "./status_notes.ts";
import { getStatusPage, putStatusPage, type StatusPage } from "./status_settings.ts";

export { getStatusPage, type StatusPage };

/**
 * Public faces of watched services: an account's status page and per-service badges. No key
 * of its own: the page's settings are kv/status_settings.ts's, its incident notes
 * kv/status_notes.ts's, its followers kv/followers.ts's; a badge's address is the service's
 * `badge` token, indexed by kv/services.ts.
 * The page lives at /status/<account slug> (it follows the slug when the name changes).
 * Neither shows a target, a hook key or a status text: only the name, the state, the daily
 * bars, the uptime and the note the owner wrote. A badge token is kept as it is: it grants
 * no more than the state it shows (as a public page would), and the owner sees it on the
 * service's page; a new one replaces it.
 */

export const MAX_NOTE = 200;

export const BADGE_RE = /^[A-Za-z0-9_-]{22}$/;

/** Stores the page's settings; every service listed must be the account's. */
export async function saveStatusPage(
  deps: Deps,
  account: number,
  page: StatusPage,
): Promise<StatusPage> {
  const own = new Set((await listServices(deps.kv, account)).map((x) => x.service.id));
  const seen = new Set<number>();
  for (const s of page.services) {
    if (!own.has(s.id)) invalid(`services: ${s.id} is not one of your services`, "services");
    if (seen.has(s.id)) invalid(`services: ${s.id} is listed twice`, "services");
    seen.add(s.id);
  }
  await putStatusPage(deps.kv, account, page);
  return page;
}

export interface PublicService {
  name: string;
  group: string;
  state: State;
  /** A maintenance window covers it now (its failures alert nobody). */
  maintenance: boolean;
  /** A heartbeat its owner paused (state wait, no alerts). */
  paused: boolean;
  uptime: number | null;
  days: { date: string; uptime: number | null; down_s: number; maintenance_s: number }[];
  note: string;
}

export interface PublicPage {
  title: string;
  /** The owner's own site, shown in the page's header; null: none. */
  link: string | null;
  /** The page's logo (the owner's profile picture) on this site; null: none. */
  logo: string | null;
  owner: string;
  services: PublicService[];
  /** What the page's live updates compare (statusVersion); not part of the JSON. */
  version: string;
  /** Incident notes of the last 90 days, newest first. */
  notes: ReturnType<typeof noteView>[];
}

/** A service's state now: a heartbeat's judged from its signals, a check's last result. */
const stateOf = async (deps: Deps, s: Service, now: number): Promise<State> =>
  s.kind === "webhook"
    ? shownVerdict(await getPulse(deps.kv, s.account, s.id), s, now).state
    : s.last?.state ?? "wait";

/** What a service shows in public: name, state, 90 daily bars, uptime, the owner's note. */
async function publicService(
  deps: Deps,
  s: Service,
  note: string,
  windows: Window[],
): Promise<PublicService> {
  const now = deps.clock.now();
  const state = await stateOf(deps, s, now);
  const h = await serviceHistory(deps.kv, s, now, windows);
  return {
    name: s.name,
    group: s.group,
    state,
    maintenance: maintenanceUntil(windows, s, now) !== null,
    paused: s.paused_at != null,
    uptime: h.uptime.all,
    days: h.days.map((d) => ({
      date: d.date,
      uptime: d.uptime,
      down_s: d.down_s,
      maintenance_s: d.maintenance_s,
    })),
    note,
  };
}

/** The public status page of the account holding `slug`; null when there is none. */
export async function publicStatusPage(deps: Deps, slug: string): Promise<PublicPage | null> {
  const account: Account | null = await accountBySlug(deps.kv, slug);
  if (!account) return null;
  const page = await getStatusPage(deps.kv, account.id);
  if (!page?.enabled) return null;
  const services: PublicService[] = [];
  const windows = await listWindows(deps.kv, account.id);
  for (const { id, note } of page.services) {
    const s = (await getService(deps.kv, account.id, id)).value;
    if (s) services.push(await publicService(deps, s, note, windows));
  }
  const notes = (await listNotes(deps.kv, account.id, deps.clock.now())).map(noteView);
  return {
    title: page.title || account.name,
    link: page.link || null,
    logo: page.logo ? avatarUrl(account) : null,
    owner: account.name,
    services,
    notes,
    version: versionOf(services, notes),
  };
}

const versionOf = (
  services: Pick<PublicService, "paused" | "maintenance" | "state">[],
  notes: { id: number }[],
) => fingerprint(`${services.map(seen).join(",")};${notes.length}:${notes[0]?.id ?? 0}`);

/** The state a visitor sees of a listed service (kv/service_state.ts shownState's order). */
const seen = (s: Pick<PublicService, "paused" | "maintenance" | "state">) =>
  s.paused ? "paused" : s.maintenance ? "maintenance" : s.state;

/**
 * The page's banner: down before maintenance before late before up. Paused services are left
 * out of the counts; services with no result yet count as neither up nor down.
 */
export function overallBanner(
  services: Pick<PublicService, "paused" | "maintenance" | "state">[],
): { tone: "ok" | "warn" | "off" | "maintenance" | "wait"; text: string } {
  const watched = services.filter((s) => !s.paused);
  const n = watched.length;
  const count = (state: string) => watched.filter((s) => seen(s) === state).length;
  const of = (k: number, what: string) =>
    `${k} of ${n} service${n === 1 ? "" : "s"} ${k === 1 ? "is" : "are"} ${what}`;
  if (n === 0) return { tone: "wait", text: "No services are watched here now" };
  if (count("off")) return { tone: "off", text: of(count("off"), "down") };
  if (count("maintenance")) return { tone: "maintenance", text: "Maintenance under way" };
  if (count("warn")) return { tone: "warn", text: of(count("warn"), "late") };
  if (count("wait") === n) return { tone: "wait", text: "Waiting for the first results" };
  return { tone: "ok", text: n === 1 ? "The service is up" : "All services are up" };
}

/**
 * The incident notes still open: those after the newest "resolved" note, other than plain
 * notes. They stand on top of the page until a "resolved" note follows them.
 */
export function openNotes(notes: PublicPage["notes"]): PublicPage["notes"] {
  const open: PublicPage["notes"] = [];
  for (const n of notes) {
    if (n.kind === "resolved") break;
    if (n.kind !== "note") open.push(n);
  }
  return open;
}

/**
 * A short text that changes when a listed service's shown state changes or a note is posted or
 * deleted: the public page's live updates poll it. Null when there is no such page.
 */
export async function statusVersion(deps: Deps, slug: string): Promise<string | null> {
  const account = await accountBySlug(deps.kv, slug);
  if (!account) return null;
  const page = await getStatusPage(deps.kv, account.id);
  if (!page?.enabled) return null;
  const now = deps.clock.now();
  const windows = await listWindows(deps.kv, account.id);
  const services = [];
  for (const { id } of page.services) {
    const s = (await getService(deps.kv, account.id, id)).value;
    if (!s) continue;
    services.push({
      paused: s.paused_at != null,
      maintenance: maintenanceUntil(windows, s, now) !== null,
      state: await stateOf(deps, s, now),
    });
  }
  return versionOf(services, await listNotes(deps.kv, account.id, now));
}
/** The badge of a token: the service's name and state now; null when unknown. */
export async function badgeOf(
  deps: Deps,
  token: string,
): Promise<{ name: string; state: State | "maintenance" | "paused" } | null> {
  if (!BADGE_RE.test(token)) return null;
  const s = await serviceByBadge(deps.kv, token);
  if (!s) return null;
  if (s.paused_at != null) return { name: s.name, state: "paused" };
  const state = await stateOf(deps, s, deps.clock.now());
  const quiet = await serviceMaintenance(deps.kv, s, deps.clock.now());
  return { name: s.name, state: quiet === null ? state : "maintenance" };
}
