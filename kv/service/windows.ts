import { DAY, iso, isoOrNull, MINUTE } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, invalid } from "../../lib/errors.ts";
import { covers, MAX_MINUTES, nextStart, runningUntil } from "../../lib/maintenance.ts";
import { cronError, validTimeZone } from "../../lib/schedule.ts";
import { type Atomic, atomic, transact } from "../_atomic.ts";
import { KEEP_DAYS, readHistory, type ServiceHistory } from "./history.ts";
import { nextId } from "../store/ids.ts";
import {
  listWindows,
  maintenanceUntil,
  MAX_WINDOWS,
  putWindows,
  quietSpans,
  type Window,
  windowsEntry,
} from "./maintenance.ts";
import { GROUPS, listServiceEntries, PLACES, type Service, serviceIdEntries } from "./commands.ts";
import { saveService, wakeAt } from "./store.ts";
import { formTokenEntry, spendFormToken, spent } from "../store/form_tokens.ts";

/**
 * The rules of maintenance windows, as /api/me/maintenance and /me/maintenance apply them:
 * the account's own services, known groups and places, a window once (from before to, at most
 * 90 days) or on a valid schedule (cron, time zone, 1 minute to a week); and what windows do
 * to a service's history and state shown. Holds no KV keys: storage is kv/service/maintenance.ts.
 */

const MAX_ONCE = 90 * 24 * 60 * MINUTE;

interface NewWindow {
  name: string;
  services: number[];
  groups: string[];
  places: string[];
  from?: number | null;
  to?: number | null;
  cron?: string | null;
  tz?: string | null;
  minutes?: number | null;
}

export function windowView(w: Window, now: number) {
  return {
    id: w.id,
    name: w.name,
    services: w.services,
    groups: w.groups,
    places: w.places,
    from: isoOrNull(w.from),
    to: isoOrNull(w.to),
    cron: w.cron,
    tz: w.tz,
    minutes: w.minutes,
    created: iso(w.created),
    running_until: isoOrNull(runningUntil(w, now)),
    next_start: isoOrNull(nextStart(w, now)),
  };
}

/** The timing of a new window, checked: once, or on a schedule, never both or neither. */
function timing(input: NewWindow): Pick<Window, "from" | "to" | "cron" | "tz" | "minutes"> {
  const once = input.from != null || input.to != null;
  const scheduled = !!input.cron;
  if (once === scheduled) {
    invalid("from: give either from and to (once) or cron, tz and minutes (a schedule)", "from");
  }
  if (once) {
    if (input.from == null || input.to == null) invalid("to: a window once needs both ends", "to");
    if (input.to <= input.from) invalid("to: the end must be after the start", "to");
    if (input.to - input.from > MAX_ONCE) invalid("to: a window lasts at most 90 days", "to");
    return { from: input.from, to: input.to, cron: null, tz: null, minutes: null };
  }
  const tz = input.tz || "UTC";
  if (!validTimeZone(tz)) invalid("tz: not a known time zone (e.g. Europe/Berlin)", "tz");
  const bad = cronError(input.cron!, tz);
  if (bad) invalid(`cron: ${bad}`, "cron");
  const minutes = input.minutes ?? 0;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_MINUTES) {
    invalid(`minutes: from 1 to ${MAX_MINUTES} (a week)`, "minutes");
  }
  return { from: null, to: null, cron: input.cron!.trim(), tz, minutes };
}

/**
 * What `createWindow` refuses in a window's fields that needs no lookup, every field at once
 * (the page shows them together instead of one a submit): nothing covered, a schedule's cron
 * line and length. The same words as its refusals; the time zone is the schema's.
 */
export function windowFieldProblems(
  input: {
    services?: unknown;
    groups?: unknown;
    places?: unknown;
    cron?: unknown;
    tz?: unknown;
    minutes?: unknown;
  },
): Record<string, string> {
  const out: Record<string, string> = {};
  const none = (v: unknown) => !Array.isArray(v) || v.length === 0;
  if (none(input.services) && none(input.groups) && none(input.places)) {
    out.services = "choose the services, a group or a place the window covers";
  }
  if (typeof input.cron === "string" && input.cron.trim()) {
    const tz = typeof input.tz === "string" && validTimeZone(input.tz) ? input.tz : "UTC";
    const bad = cronError(input.cron, tz);
    if (bad) out.cron = bad;
    const m = input.minutes;
    if (typeof m === "number" && (!Number.isInteger(m) || m < 1 || m > MAX_MINUTES)) {
      out.minutes = `from 1 to ${MAX_MINUTES} (a week)`;
    }
  }
  return out;
}

/**
 * Adds a window; every service named must be the account's. `form`: the token of the page's
 * form and how long it counts (kv/store/form_tokens.ts), spent in the window's atomic, so the same
 * form sent again adds nothing (a conflict with `repeated`).
 */
export async function createWindow(
  deps: Deps,
  account: number,
  input: NewWindow,
  form?: { token: string; life: number },
): Promise<Window> {
  const services = [...new Set(input.services)];
  const now = deps.clock.now();
  return await transact(async () => {
    // The services' id entries are checked in the atomic: a service removed meanwhile fails
    // the commit, and the retry refuses it.
    const [entry, ids, token] = await Promise.all([
      windowsEntry(deps.kv, account),
      serviceIdEntries(deps.kv, services),
      form === undefined ? null : formTokenEntry(deps.kv, account, form.token),
    ]);
    if (token && spent(token, now)) {
      conflict("this form was sent before: the window was added once", { repeated: true });
    }
    for (const [i, e] of ids.entries()) {
      if (e.value !== account) {
        invalid(`services: ${services[i]} is not one of your services`, "services");
      }
    }
    const when = coverAndTiming(input);
    const list = entry.value ?? [];
    if (list.length >= MAX_WINDOWS) conflict(`at most ${MAX_WINDOWS} maintenance windows`);
    const w: Window = {
      id: nextId("maintenance", Math.max(0, ...list.map((x) => x.id))),
      name: input.name,
      services,
      groups: [...new Set(input.groups)],
      places: [...new Set(input.places)],
      ...when,
      created: now,
    };
    const op = putWindows(atomic(deps.kv).check(entry, ...ids), account, [...list, w]);
    return { op: token ? spendFormToken(op, token, now, form!.life) : op, result: w };
  });
}

/** The most ends by hand a scheduled window keeps (the oldest go first: history is 90 days). */
const MAX_ENDS = 50;

/**
 * Ends the window's run that holds now, at `now`: a window once has its end moved there; one on
 * a schedule keeps its schedule (the next runs come as planned) and this run ends. The services
 * it covered are looked at at once (their due time moved to now), so one still off alerts now,
 * not at the end the window had. False when there is no such window or it does not run now.
 */
export async function endWindow(deps: Deps, account: number, id: number): Promise<boolean> {
  const now = deps.clock.now();
  return await transact(async () => {
    const { entry, list, w, services } = await windowWithServices(deps.kv, account, id);
    if (!w || runningUntil(w, now) === null) return { op: null, result: false };
    const cut: Window = w.cron
      ? { ...w, ended: [...(w.ended ?? []), now].slice(-MAX_ENDS) }
      : { ...w, to: now };
    const op = putWindows(
      atomic(deps.kv).check(entry),
      account,
      list.map((x) => x.id === id ? cut : x),
    );
    return { op: lookNow(op, services.filter((e) => covers(w, e.value)), now), result: true };
  });
}

/**
 * The services a window no longer holds, looked at now (their records checked in `op`): a paused
 * one waits for its resume, one already due keeps its time.
 */
function lookNow(op: Atomic, entries: Deno.KvEntry<Service>[], now: number): Atomic {
  const moved = entries.filter((e) => e.value.paused_at == null && e.value.due > now);
  for (const e of moved) saveService(op.check(e), e.value, { ...e.value, due: now });
  return moved.length ? wakeAt(op, now, now) : op;
}

/** An account's windows (their entry, to check), the one of `id`, and the account's services. */
async function windowWithServices(kv: Deno.Kv, account: number, id: number) {
  const [entry, services] = await Promise.all([
    windowsEntry(kv, account),
    listServiceEntries(kv, account),
  ]);
  const list = entry.value ?? [];
  return { entry, list, w: list.find((x) => x.id === id), services };
}

/** A new window's groups, places and timing, checked (its services are checked in its atomic). */
function coverAndTiming(input: NewWindow) {
  for (const g of input.groups) {
    if (!(GROUPS as readonly string[]).includes(g)) invalid(`groups: no group "${g}"`, "groups");
  }
  for (const p of input.places) {
    if (!(PLACES as readonly string[]).includes(p)) invalid(`places: no place "${p}"`, "places");
  }
  if (!input.services.length && !input.groups.length && !input.places.length) {
    invalid("services: choose the services, a group or a place the window covers", "services");
  }
  return timing(input);
}

/** Deletes a window (one running ends now, as `endWindow` ends it); false when there is none. */
export async function deleteWindow(deps: Deps, account: number, id: number): Promise<boolean> {
  const now = deps.clock.now();
  return await transact(async () => {
    const { entry, list, w, services } = await windowWithServices(deps.kv, account, id);
    if (!w) return { op: null, result: false };
    const op = putWindows(atomic(deps.kv).check(entry), account, list.filter((x) => x !== w));
    // A window deleted while it runs ends now: what it covered is looked at as "End now" does.
    const held = runningUntil(w, now) === null ? [] : services.filter((e) => covers(w, e.value));
    return { op: lookNow(op, held, now), result: true };
  });
}

/** A service's history with its maintenance stretches left out of uptime and marked. */
export async function serviceHistory(
  kv: Deno.Kv,
  s: Service,
  now: number,
  windows?: Window[],
): Promise<ServiceHistory> {
  const list = windows ?? await listWindows(kv, s.account);
  const from = Math.floor(now / DAY) * DAY - (KEEP_DAYS - 1) * DAY;
  return await readHistory(kv, s.account, s.id, now, KEEP_DAYS, quietSpans(list, s, from, now));
}

/** When the maintenance covering the service ends, or null: what its page and badge show. */
export async function serviceMaintenance(kv: Deno.Kv, s: Service, now: number) {
  return maintenanceUntil(await listWindows(kv, s.account), s, now);
}
