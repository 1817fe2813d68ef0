import type { Deps } from "../../lib/deps.ts";
import { invalid, notFound } from "../../lib/errors.ts";
import { fingerprint } from "../../lib/text.ts";
import { type Account, avatarUrl, getAccount } from "../accounts/accounts.ts";
import { serviceHistory, serviceMaintenance } from "../service/windows.ts";
import { listWindows, maintenanceUntil, type Window } from "../service/maintenance.ts";
import {
  listServices,
  type Service,
  serviceByBadge,
  shownVerdict,
  type State,
} from "../service/commands.ts";
import { getPulse } from "../service/heartbeats.ts";
import { listNotes, noteView } from "./notes.ts";
import { unreachableVia } from "../service/dependencies.ts";
import { type Incident, incidentFeed, incidentView, listIncidents, onPage } from "./incidents.ts";
import { incidentExplained } from "./reports.ts";
import {
  dropStatusPageInto,
  getStatusPage,
  listStatusPages,
  MAX_PAGES,
  nextPageId,
  pageBySlug,
  pageSlug,
  putStatusPage,
  type StatusPage,
} from "./settings.ts";
import { erasePageFollowing } from "./follows.ts";
import { atomic, commit } from "../_atomic.ts";

export { getStatusPage, listStatusPages, MAX_PAGES, pageSlug, type StatusPage };

/**
 * Public faces of watched services: an account's status pages and per-service badges. No key
 * of its own: the pages' settings are kv/status/settings.ts's, its incident notes
 * kv/status/notes.ts's, its followers kv/status/followers.ts's; a badge's address is the service's
 * `badge` token, indexed by kv/service/commands.ts.
 * The first page lives at /status/<account slug> (it follows the slug when the name changes),
 * the others at /status/<their own slug>.
 * Neither shows a target, a hook key or a status text: only the name, the state, the daily
 * bars, the uptime, the note the owner wrote and the page's incidents (kv/status/incidents.ts). A badge token is kept as it is: it grants
 * no more than the state it shows (as a public page would), and the owner sees it on the
 * service's page; a new one replaces it.
 */

export const MAX_NOTE = 200;

export const BADGE_RE = /^[A-Za-z0-9_-]{22}$/;

/**
 * Stores a page's settings; every service listed must be the account's. `form`: the token of
 * the form that makes it (kv/status/settings.ts `putStatusPage`).
 */
export async function saveStatusPage(
  deps: Deps,
  account: number,
  page: StatusPage,
  form?: { token: string; life: number },
): Promise<StatusPage> {
  const own = new Set((await listServices(deps.kv, account)).map((x) => x.service.id));
  const seen = new Set<number>();
  for (const s of page.services) {
    if (!own.has(s.id)) invalid(`services: ${s.id} is not one of your services`, "services");
    if (seen.has(s.id)) invalid(`services: ${s.id} is listed twice`, "services");
    seen.add(s.id);
  }
  const groups = page.services.map((s) => (s.group ?? "").trim());
  const stored: StatusPage = {
    ...page,
    services: page.services.map((s, i) => ({
      id: s.id,
      note: s.note,
      ...(groups[i] ? { group: groups[i] } : {}),
    })),
  };
  const sent = form ? { ...form, now: deps.clock.now() } : undefined;
  await putStatusPage(deps.kv, account, stored, sent);
  return stored;
}

/**
 * Makes another page (its own slug; at most MAX_PAGES an account). `form`: its form's token, so
 * the same form sent again makes no second page (a conflict with `repeated`).
 */
export async function createStatusPage(
  deps: Deps,
  account: number,
  page: Omit<StatusPage, "id">,
  form?: { token: string; life: number },
): Promise<StatusPage> {
  if (!page.slug) invalid("slug: give the page an address of its own", "slug");
  return await saveStatusPage(deps, account, {
    ...page,
    id: await nextPageId(deps.kv, account),
  }, form);
}

/** Changes an existing page; not found when there is none. */
export async function changeStatusPage(
  deps: Deps,
  account: number,
  page: StatusPage,
): Promise<StatusPage> {
  if (!await getStatusPage(deps.kv, account, page.id)) notFound("no such status page");
  return await saveStatusPage(deps, account, page);
}

/**
 * Deletes a page with its slug and its followers (their addresses and queued mail); its
 * incidents stay (they are the account's, shown on every page listing what they affect).
 */
export async function deleteStatusPage(deps: Deps, account: number, id: number): Promise<void> {
  const owner = (await getAccount(deps.kv, account)).value;
  if (!owner) notFound("no such status page");
  const op = atomic(deps.kv);
  const page = await dropStatusPageInto(deps.kv, op, account, id);
  if (!(await commit(op)).ok) notFound("no such status page");
  await erasePageFollowing(deps, account, id, pageSlug(page, owner));
}

export interface PublicService {
  name: string;
  group: string;
  state: State;
  /** A maintenance window covers it now (its failures alert nobody). */
  maintenance: boolean;
  /** A heartbeat its owner paused (state wait, no alerts). */
  paused: boolean;
  /** Off while services it depends on are off: their names ("Unreachable (router down)"). */
  unreachable_via: string[];
  uptime: number | null;
  days: { date: string; uptime: number | null; down_s: number; maintenance_s: number }[];
  note: string;
}

/** An incident as visitors read it: no ids of services, only the names the page lists. */
export type PublicIncident = Omit<ReturnType<typeof incidentView>, "services"> & {
  affected: string[];
  /** What explains its outages (a maintenance window, a dependency); null: nothing. */
  explained: string | null;
};

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
  /** The incidents of the last year that show here, newest first (open ones included). */
  incidents: PublicIncident[];
  /** The same as records, with the listed services' names, for the page; not in the JSON. */
  cards: { list: Incident[]; explained: Map<number, string | null>; names: Map<number, string> };
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
  state: State,
  via: string[],
): Promise<PublicService> {
  const now = deps.clock.now();
  const h = await serviceHistory(deps.kv, s, now, windows);
  return {
    name: s.name,
    group: s.group,
    state,
    maintenance: maintenanceUntil(windows, s, now) !== null,
    paused: s.paused_at != null,
    unreachable_via: via,
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

/**
 * The states of the account's services now, and for those off behind an off service they
 * depend on, those parents' names (kv/service/dependencies.ts): a service listed on a page reads
 * unreachable even when its parent is not listed.
 */
async function statesNow(deps: Deps, account: number, now: number) {
  const all = (await listServices(deps.kv, account)).map((x) => x.service);
  const states = new Map<number, State>();
  for (const s of all) states.set(s.id, await stateOf(deps, s, now));
  const via = unreachableVia(all.map((s) => ({ ...s, state: states.get(s.id)! })));
  return { all, states, via };
}

/** The published page of a slug with its owner; null when there is none. */
async function pageOfSlug(
  deps: Deps,
  slug: string,
): Promise<{ account: Account; page: StatusPage } | null> {
  const found = await pageBySlug(deps.kv, slug);
  if (!found?.page.enabled) return null;
  return { account: found.owner, page: found.page };
}

/** The public status page of the account holding `slug`; null when there is none. */
export async function publicStatusPage(deps: Deps, slug: string): Promise<PublicPage | null> {
  const found = await pageOfSlug(deps, slug);
  if (!found) return null;
  const { account, page } = found;
  const now = deps.clock.now();
  const { all, states, via } = await statesNow(deps, account.id, now);
  const byId = new Map(all.map((s) => [s.id, s]));
  const services: PublicService[] = [];
  const windows = await listWindows(deps.kv, account.id);
  for (const { id, note, group } of page.services) {
    const s = byId.get(id);
    if (!s) continue;
    const shown = await publicService(deps, s, note, windows, states.get(id)!, via.get(id) ?? []);
    services.push(group ? { ...shown, group } : shown);
  }
  const notes = (await listNotes(deps.kv, account.id, now)).map(noteView);
  const listed = page.services.map((s) => s.id);
  const shown = onPage(await listIncidents(deps.kv, account.id, now), listed);
  const names = new Map(
    listed.map((id) => [id, byId.get(id)?.name]).filter((x): x is [number, string] => !!x[1]),
  );
  const incidents = await Promise.all(shown.map(async (i): Promise<PublicIncident> => {
    const { services: ids, ...view } = incidentView(i);
    return {
      ...view,
      affected: ids.map((id) => names.get(id)).filter((n): n is string => !!n),
      explained: await incidentExplained(deps, account.id, i, all),
    };
  }));
  return {
    title: page.title || account.name,
    link: page.link || null,
    logo: page.logo ? avatarUrl(account) : null,
    owner: account.name,
    services,
    notes,
    incidents,
    cards: {
      list: shown,
      explained: new Map(shown.map((i, n) => [i.id, incidents[n].explained])),
      names,
    },
    version: versionOf(services, notes, shown),
  };
}

/** The Atom feed of the page's incidents (lib/atom.ts); null when there is no such page. */
export async function statusIncidentFeed(deps: Deps, slug: string): Promise<string | null> {
  const found = await pageOfSlug(deps, slug);
  if (!found) return null;
  const { account, page } = found;
  const now = deps.clock.now();
  const listed = page.services.map((s) => s.id);
  const all = (await listServices(deps.kv, account.id)).map((x) => x.service);
  const names = new Map(all.filter((s) => listed.includes(s.id)).map((s) => [s.id, s.name]));
  return incidentFeed(
    deps,
    onPage(await listIncidents(deps.kv, account.id, now), listed),
    {
      id: `${account.id}:${page.id}`,
      title: page.title || account.name,
      url: `${deps.config.baseUrl}/status/${slug}`,
      owner: account.name,
      names,
    },
    now,
  );
}

const versionOf = (
  services: Pick<PublicService, "paused" | "maintenance" | "state" | "unreachable_via">[],
  notes: { id: number }[],
  incidents: Pick<Incident, "id" | "updates">[],
) =>
  fingerprint(
    `${services.map(seen).join(",")};${notes.length}:${notes[0]?.id ?? 0};${
      incidents.map((i) => `${i.id}.${i.updates.length}`).join(",")
    }`,
  );

/** The state a visitor sees of a listed service (kv/service/state.ts shownState's order). */
export const seen = (
  s: Pick<PublicService, "paused" | "maintenance" | "state"> & { unreachable_via?: string[] },
) =>
  s.paused
    ? "paused"
    : s.maintenance
    ? "maintenance"
    : s.state === "off" && s.unreachable_via?.length
    ? "unreachable"
    : s.state;

/** What a visitor reads of a listed service's state: the tone of its colour and its words. */
export function visitorState(
  s: Pick<PublicService, "paused" | "maintenance" | "state" | "unreachable_via">,
): { tone: string; text: string } {
  const tone = seen(s);
  const text = {
    ok: "Operational",
    warn: "Late",
    off: "Down",
    wait: "No data yet",
    maintenance: "Under maintenance",
    paused: "Paused",
    unreachable: `Unreachable (${s.unreachable_via.join(", ")} down)`,
  }[tone] ?? tone;
  return { tone, text };
}

/**
 * The page's banner: down before maintenance before late before up. Paused services are left
 * out of the counts; services with no result yet count as neither up nor down.
 */
export function overallBanner(
  services: (Pick<PublicService, "paused" | "maintenance" | "state"> & {
    unreachable_via?: string[];
  })[],
): { tone: "ok" | "warn" | "off" | "maintenance" | "wait"; text: string } {
  const watched = services.filter((s) => !s.paused);
  const n = watched.length;
  const count = (state: string) => watched.filter((s) => seen(s) === state).length;
  const of = (k: number, what: string) =>
    `${k} of ${n} service${n === 1 ? "" : "s"} ${k === 1 ? "is" : "are"} ${what}`;
  if (n === 0) return { tone: "wait", text: "No services are watched here now" };
  if (count("off")) return { tone: "off", text: of(count("off"), "down") };
  if (count("unreachable")) {
    return { tone: "off", text: of(count("unreachable"), "unreachable") };
  }
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
  const found = await pageOfSlug(deps, slug);
  if (!found) return null;
  const { account, page } = found;
  const now = deps.clock.now();
  const windows = await listWindows(deps.kv, account.id);
  const { all, states, via } = await statesNow(deps, account.id, now);
  const services = [];
  for (const { id } of page.services) {
    const s = all.find((x) => x.id === id);
    if (!s) continue;
    services.push({
      paused: s.paused_at != null,
      maintenance: maintenanceUntil(windows, s, now) !== null,
      state: states.get(id)!,
      unreachable_via: via.get(id) ?? [],
    });
  }
  const listed = page.services.map((s) => s.id);
  return versionOf(
    services,
    await listNotes(deps.kv, account.id, now),
    onPage(await listIncidents(deps.kv, account.id, now), listed),
  );
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
