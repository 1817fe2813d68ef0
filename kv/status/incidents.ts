import { atomFeed, tagUri } from "../../lib/atom.ts";
import { DAY, iso, isoDate, isoOrNull, readable } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, invalid, notFound } from "../../lib/errors.ts";
import { atomic, commit, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { dropNoteInto, eachNote } from "./notes.ts";
import { deliver, enqueueFollowers } from "../alerts/outbox.ts";
import { claimId } from "../store/ids.ts";
import { rateInto, RULES } from "../store/rate_limit.ts";
import { listServices } from "../service/commands.ts";

/**
 * Incidents of an account's status page, with their timeline: the owner opens one (a title,
 * the services it affects, an impact and a first update), posts updates, each with a state
 * (investigating, identified, monitoring, resolved), and resolves it with the last. Every
 * update is mailed to the page's followers (kv/status/followers.ts, queued in the update's atomic).
 * Key layout (owned here):
 *   ["incidents", account_id, id] -> Incident, its updates inside (at most MAX_UPDATES); ids
 *                                   grow with time; kept a year after it was opened
 * The status page shows the open ones at the top and the rest by month; the Atom feed lists
 * them (lib/atom.ts).
 */

export const INCIDENT_STATES = ["investigating", "identified", "monitoring", "resolved"] as const;
export type IncidentState = typeof INCIDENT_STATES[number];
export const IMPACTS = ["none", "minor", "major", "critical"] as const;
export type Impact = typeof IMPACTS[number];
export const MAX_TITLE = 120;
export const MAX_UPDATE_TEXT = 2000;
export const MAX_UPDATES = 50;
export const MAX_AFFECTED = 30;
export const KEPT_MS = 366 * DAY;

export interface IncidentUpdate {
  id: number;
  at: number;
  state: IncidentState;
  text: string;
}

export interface Incident {
  id: number;
  account: number;
  title: string;
  services: number[];
  impact: Impact;
  /** The latest update's state. */
  state: IncidentState;
  created: number;
  /** When its resolved update came; null while open. */
  resolved: number | null;
  updates: IncidentUpdate[];
}

const incidentKey = (account: number, id: number) => ["incidents", account, id] as const;

export interface NewIncident {
  title: string;
  services: number[];
  impact: Impact;
  state: IncidentState;
  text: string;
}

export const STATE_WORDS: Record<IncidentState, string> = {
  investigating: "Investigating",
  identified: "Identified",
  monitoring: "Monitoring",
  resolved: "Resolved",
};

export const IMPACT_WORDS: Record<Impact, string> = {
  none: "No impact",
  minor: "Minor",
  major: "Major",
  critical: "Critical",
};

export function incidentView(i: Incident) {
  return {
    id: i.id,
    title: i.title,
    services: i.services,
    impact: i.impact,
    state: i.state,
    created: iso(i.created),
    resolved: isoOrNull(i.resolved),
    duration_s: i.resolved === null ? null : Math.round((i.resolved - i.created) / 1000),
    updates: i.updates.map((u) => ({ id: u.id, at: iso(u.at), state: u.state, text: u.text })),
  };
}

/** The ids, each one of the account's services. */
async function ownServices(deps: Deps, account: number, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  if (unique.length > MAX_AFFECTED) invalid(`services: at most ${MAX_AFFECTED}`, "services");
  const own = new Set((await listServices(deps.kv, account)).map((x) => x.service.id));
  for (const id of unique) {
    if (!own.has(id)) invalid(`services: ${id} is not one of your services`, "services");
  }
  return unique;
}

/** The fanout of an update: what the followers are mailed. */
const told = (i: Incident, u: IncidentUpdate) => ({
  kind: "incident" as const,
  incident: i.id,
  title: i.title,
  note: u.state,
  text: u.text,
  services: i.services,
});

/**
 * Opens an incident with its first update, queued to the followers in the same atomic (at
 * most RULES.notes an hour, every update counted: each mails every follower).
 */
export async function openIncident(deps: Deps, account: number, input: NewIncident) {
  const { kv } = deps;
  const now = deps.clock.now();
  const services = await ownServices(deps, account, input.services);
  const { incident, fanout } = await transact(async () => {
    const claim = await claimId(kv, "incident", (id) => incidentKey(account, id));
    const rate = await rateInto(kv, RULES.notes, `${RULES.notes.name}:${account}`, now);
    const update: IncidentUpdate = { id: 1, at: now, state: input.state, text: input.text };
    const incident: Incident = {
      id: claim.id,
      account,
      title: input.title,
      services,
      impact: input.impact,
      state: input.state,
      created: now,
      resolved: input.state === "resolved" ? now : null,
      updates: [update],
    };
    const op = rate.apply(claim.apply(atomic(kv)))
      .set(incidentKey(account, incident.id), incident, { expireIn: KEPT_MS });
    const fanout = enqueueFollowers(op, account, told(incident, update), now);
    return { op, result: { incident, fanout } };
  });
  await deliver(deps, [fanout]);
  return incident;
}

/**
 * Posts an update; `resolved` resolves it (and a later update opens it again). The title,
 * services and impact may change with it.
 */
export async function postIncidentUpdate(
  deps: Deps,
  account: number,
  id: number,
  input: {
    state: IncidentState;
    text: string;
    title?: string;
    impact?: Impact;
    services?: number[];
  },
) {
  const { kv } = deps;
  const now = deps.clock.now();
  const services = input.services ? await ownServices(deps, account, input.services) : null;
  const { incident, fanout } = await transact(async () => {
    const entry = await kv.get<Incident>(incidentKey(account, id));
    const old = entry.value;
    if (!old) notFound("no such incident");
    if (old.updates.length >= MAX_UPDATES) {
      conflict(`an incident holds at most ${MAX_UPDATES} updates; open a new one`);
    }
    const rate = await rateInto(kv, RULES.notes, `${RULES.notes.name}:${account}`, now);
    // Times only grow: an update never sorts before the one it follows.
    const at = Math.max(now, old.updates[old.updates.length - 1].at + 1);
    const update: IncidentUpdate = {
      id: old.updates[old.updates.length - 1].id + 1,
      at,
      state: input.state,
      text: input.text,
    };
    const incident: Incident = {
      ...old,
      title: input.title ?? old.title,
      impact: input.impact ?? old.impact,
      services: services ?? old.services,
      state: input.state,
      resolved: input.state === "resolved" ? at : null,
      updates: [...old.updates, update],
    };
    const op = rate.apply(atomic(kv).check(entry))
      .set(entry.key, incident, { expireIn: Math.max(DAY, old.created + KEPT_MS - now) });
    const fanout = enqueueFollowers(op, account, told(incident, update), now);
    return { op, result: { incident, fanout } };
  });
  await deliver(deps, [fanout]);
  return incident;
}

export async function getIncident(kv: Deno.Kv, account: number, id: number) {
  return (await kv.get<Incident>(incidentKey(account, id))).value;
}

/** The account's incidents of the last year, newest first. */
export async function listIncidents(
  kv: Deno.Kv,
  account: number,
  now: number,
): Promise<Incident[]> {
  const out: Incident[] = [];
  for await (const e of kv.list<Incident>({ prefix: ["incidents", account] }, { reverse: true })) {
    if (e.value.created > now - KEPT_MS) out.push(e.value);
  }
  return out;
}

/** Deletes one incident; false when there is none. */
export async function deleteIncident(deps: Deps, account: number, id: number): Promise<boolean> {
  return await transact(async () => {
    const entry = await deps.kv.get<Incident>(incidentKey(account, id));
    if (!entry.value) return { op: null, result: false };
    return { op: atomic(deps.kv).check(entry).delete(entry.key), result: true };
  });
}

/** Deletes every incident of the account (erasure). */
export async function eraseIncidents(kv: Deno.Kv, account: number): Promise<number> {
  return await deleteKeys(kv, keysOf(kv, { prefix: ["incidents", account] }));
}

/** Months ("YYYY-MM") to their incidents, newest first: the page's history. */
export function byMonth(list: Incident[]): [string, Incident[]][] {
  const out = new Map<string, Incident[]>();
  for (const i of list) {
    const m = new Date(i.created).toISOString().slice(0, 7);
    out.set(m, [...out.get(m) ?? [], i]);
  }
  return [...out];
}

/**
 * A migrated incident note (kv/store/migrations.ts): the note becomes the first update of an
 * incident titled by its first words; one that said resolved, or older than a week, is
 * resolved at its time.
 */
export function incidentOfNote(
  note: { id: number; account: number; kind: string; text: string; at: number },
  now: number,
): Incident {
  const state: IncidentState = note.kind === "note"
    ? "monitoring"
    : (INCIDENT_STATES as readonly string[]).includes(note.kind)
    ? note.kind as IncidentState
    : "investigating";
  const firstLine = note.text.split(/\n/)[0].trim();
  const title = firstLine.length > 80 ? `${firstLine.slice(0, 79).trimEnd()}…` : firstLine;
  const done = state === "resolved" || note.at < now - 7 * DAY;
  return {
    id: note.id,
    account: note.account,
    title: title || STATE_WORDS[state],
    services: [],
    impact: "none",
    state: done ? "resolved" : state,
    created: note.at,
    resolved: done ? note.at : null,
    updates: [{ id: 1, at: note.at, state, text: note.text }],
  };
}

/**
 * Today's incident notes become the first update of an incident each (a migration step): the
 * note deleted and the incident written in one atomic, so a step cut short and run again moves
 * the rest; nothing is mailed (the followers had the note's mail).
 */
export async function moveNotes(kv: Deno.Kv, now: number): Promise<number> {
  let moved = 0;
  for await (const e of eachNote(kv)) {
    const i = incidentOfNote(e.value, now);
    const key = incidentKey(i.account, i.id);
    const op = dropNoteInto(atomic(kv), e)
      .check({ key, versionstamp: null })
      .set(key, i, { expireIn: Math.max(DAY, i.created + KEPT_MS - now) });
    if ((await commit(op)).ok) moved++;
  }
  return moved;
}

/** A page's incidents as an Atom feed: an entry per incident, its updates newest first. */
export function incidentFeed(
  deps: Deps,
  list: Incident[],
  page: { id: string; title: string; url: string; owner: string; names: Map<number, string> },
  now: number,
): string {
  return atomFeed({
    id: tagUri(deps.config.baseUrl, "2026-12-01", `incidents:${page.id}`),
    title: `${page.title}: incidents`,
    self: `${page.url}/incidents.atom`,
    alternate: page.url,
    author: page.owner,
    updated: list.length ? 0 : now,
    entries: list.map((i) => {
      const last = i.updates[i.updates.length - 1];
      const affected = i.services.map((id) => page.names.get(id)).filter((n) => n);
      return {
        id: tagUri(deps.config.baseUrl, isoDate(i.created), `incident:${i.account}:${i.id}`),
        title: `${i.title} (${STATE_WORDS[i.state]})`,
        published: i.created,
        updated: last.at,
        link: `${page.url}#incident-${i.id}`,
        categories: [i.state, i.impact],
        content: [
          ...(affected.length ? [`Affected: ${affected.join(", ")}`, ""] : []),
          ...[...i.updates].reverse().flatMap((u) => [
            `${STATE_WORDS[u.state]}, ${readable(u.at)}:`,
            u.text,
            "",
          ]),
        ].join("\n").trimEnd(),
      };
    }),
  });
}

/**
 * The incidents a status page shows: those that affect a service it lists, and those that name
 * no service (the whole account's), newest first.
 */
export function onPage(list: Incident[], listed: number[]): Incident[] {
  const here = new Set(listed);
  return list.filter((i) => i.services.length === 0 || i.services.some((id) => here.has(id)));
}
