import { DAY, HOUR, iso, MINUTE } from "../lib/clock.ts";
import type { CheckResult } from "../lib/checks/mod.ts";
import { randomToken, sha256hex } from "../lib/crypto.ts";
import type { Deps } from "../lib/deps.ts";
import { conflict, invalid } from "../lib/errors.ts";
import type { Mail } from "../lib/mail.ts";
import type { Schedule } from "../lib/schedule.ts";
import type { Kind } from "../lib/targets.ts";
import { type Atomic, atomic, commit, transact } from "./_atomic.ts";
import { getAccount } from "./accounts.ts";
import { claimId } from "./ids.ts";
import { dropDue, dueRange, moveDue, putDue } from "./service_due.ts";
import {
  beatLimits,
  firstLook,
  floorMinute,
  minuteAfter,
  openFailure,
  openRun,
  pulseState,
  runGrace,
  type Service,
  type State,
} from "./service_state.ts";
import {
  type AlertPayload,
  channelsOf,
  deleteChannel,
  deliverPosts,
  enqueuePosts,
} from "./channels.ts";
import {
  dropHookRef,
  dropPulse,
  eraseEvents,
  forgetHooks,
  getPulse,
  type HookRef,
  listPulses,
  type Pulse,
  putHookRef,
  trimEvents,
} from "./hooks.ts";
import { addDuration, emptyDay, eraseHistory, readDay, recordChange } from "./history.ts";
import { deliver, enqueueMail } from "./outbox.ts";
import { queueFanout } from "./fanouts.ts";
import { listWindows, maintenanceUntil } from "./maintenance.ts";
import { runFanout } from "./followers.ts";
import { certificateExpiryMail, serviceAlertMail } from "../mail/services.ts";

/**
 * Watched services. Key layout:
 *   ["services", account_id, id]    -> Service
 *   ["services_by_id", id]          -> account id
 *   ["service_count", account_id]   -> KvU64, services held (the 30 limit)
 *   ["service_due", due_ms, id]     -> account id: when the runner looks at the service next.
 *                                      Claiming a check moves this entry to the lease's end,
 *                                      so one process runs it; `Service.due` names the entry.
 * Heartbeat keys and beats live in kv/hooks.ts. Every index and counter is written in the
 * atomic of its record.
 */

export const GROUPS = ["Public", "LAN and tailnet", "Data", "Jobs"] as const;
export const PLACES = [
  "via tunnel",
  "cloudflared",
  "LAN",
  "tailnet",
  "container only",
  "oneshot",
  "cloud",
  "on site",
] as const;
export const INTERVALS = [5, 15, 60, 240, 1440] as const;
/** Consecutive failed checks before a checked service turns warn or off (default 1). */
export const THRESHOLDS = [1, 2, 3, 4, 5] as const;
/** Days left on a certificate at which one expiry alert goes out each. */
export const EXPIRY_MARKS = [14, 7, 1] as const;
export const MAX_SERVICES = 30;
/** A claimed check is run again by anyone after this, should its process die. */
export const LEASE_MS = 2 * MINUTE;

export type { Service, ServiceView, State } from "./service_state.ts";
export {
  beatLimits,
  beatState,
  firstLook,
  openFailure,
  openRun,
  pulseState,
  runGrace,
  serviceView,
} from "./service_state.ts";

export const serviceKey = (account: number, id: number) => ["services", account, id] as const;
const badgeKey = (token: string) => ["service_badges", token] as const;
const byIdKey = (id: number) => ["services_by_id", id] as const;
const countKey = (account: number) => ["service_count", account] as const;

/** What a hook key stands for (kv/hooks.ts): the service, its name and its run grace. */
const hookRef = (s: Service): HookRef => ({
  account: s.account,
  id: s.id,
  name: s.name,
  grace: runGrace(s),
});

export async function getService(kv: Deno.Kv, account: number, id: number) {
  return await kv.get<Service>(serviceKey(account, id));
}

/** A heartbeat's signals (null for a checked kind). */
export async function getBeat(kv: Deno.Kv, s: Service): Promise<Pulse | null> {
  if (s.kind !== "webhook") return null;
  return await getPulse(kv, s.account, s.id);
}

/** The account's services, oldest first, with their heartbeat signals. */
export async function listServices(
  kv: Deno.Kv,
  account: number,
): Promise<{ service: Service; beat: Pulse | null }[]> {
  const pulses = await listPulses(kv, account);
  const out = [];
  for await (const e of kv.list<Service>({ prefix: ["services", account] })) {
    out.push({ service: e.value, beat: pulses.get(e.value.id) ?? null });
  }
  return out;
}

/** Every service of every account (team listing). */
export async function listAllServices(kv: Deno.Kv) {
  const out: { service: Service; beat: Pulse | null }[] = [];
  for await (const e of kv.list<Service>({ prefix: ["services"] })) {
    out.push({ service: e.value, beat: await getBeat(kv, e.value) });
  }
  return out;
}

export async function countServices(kv: Deno.Kv, account: number): Promise<number> {
  return Number((await kv.get<Deno.KvU64>(countKey(account))).value?.value ?? 0n);
}

export interface NewService {
  name: string;
  what: string;
  group: string;
  place: string | null;
  interval: number;
  alerts: boolean;
  kind: Kind;
  check: string;
  hint: string | null;
  /** 1 when absent. */
  threshold?: number;
  schedule?: Schedule | null;
  channels?: number[];
  remind?: number | null;
}

const tooMany = () =>
  conflict(`at most ${MAX_SERVICES} services per account; remove one first`, {
    max: MAX_SERVICES,
  });

/** Stores a new service with its first result; answers it and, for a heartbeat, its key. */
export async function createService(
  deps: Deps,
  account: number,
  input: NewService,
  first: CheckResult | null,
): Promise<{ service: Service; key: string | null }> {
  const { kv } = deps;
  const key = input.kind === "webhook" ? randomToken(32) : null;
  const hash = key ? sha256hex(key) : null;
  const now = deps.clock.now();
  const service = await transact(async () => {
    const count = await kv.get<Deno.KvU64>(countKey(account));
    if (Number(count.value?.value ?? 0n) >= MAX_SERVICES) tooMany();
    const id = await claimId(kv, "service", byIdKey);
    // Checked at creation: next at its interval. Not checked (past the manual-check limit): at
    // the next minute's run. A heartbeat: before its first beat could turn off.
    const due = input.kind === "webhook"
      ? firstLook(input, now)
      : floorMinute(now) + (first ? input.interval : 1) * MINUTE;
    const base: Service = {
      id: id.id,
      account,
      ...input,
      created: now,
      hook: hash,
      last: null,
      streak: 0,
      cert: null,
      seen: "wait",
      ...(input.kind === "webhook" ? { looked: now } : {}),
      down_mailed: false,
      due,
    };
    // The first result counts as any other (threshold, certificate), without alerts.
    const s = first ? counted(base, first, now).service : base;
    const op = id.apply(atomic(kv)).check(count)
      .set(serviceKey(account, s.id), s)
      .set(byIdKey(s.id), account)
      .sum(countKey(account), 1n);
    putDue(op, due, s.id, account);
    if (hash) putHookRef(op, hash, hookRef(s));
    if (first) {
      s.since = now;
      recordChange(op, account, s.id, now, { state: s.seen, status: s.last!.status });
      addDuration(op, emptyDay(account, s.id, now), first.ms);
    }
    return { op, result: s };
  });
  return { service, key };
}

export interface ServicePatch {
  name?: string;
  what?: string;
  group?: string;
  place?: string | null;
  interval?: number;
  alerts?: boolean;
  threshold?: number;
  schedule?: Schedule | null;
  channels?: number[];
  remind?: number | null;
}

export async function patchService(
  deps: Deps,
  account: number,
  id: number,
  patch: ServicePatch,
): Promise<Service | null> {
  const { kv } = deps;
  const now = deps.clock.now();
  const out = await transact(async () => {
    const entry = await getService(kv, account, id);
    if (!entry.value) return { op: null, result: null };
    const old = entry.value;
    const s: Service = { ...old, ...patch };
    const op = atomic(kv).check(entry);
    if (patch.interval !== undefined && patch.interval !== old.interval) {
      // The next look comes one new interval after the last one, or now if that is past.
      const base = old.last?.checked ?? old.created;
      s.due = Math.max(floorMinute(now), floorMinute(base) + s.interval * MINUTE);
      moveDue(op, old.due, s.due, id, account);
    } else if (
      patch.schedule !== undefined &&
      JSON.stringify(patch.schedule) !== JSON.stringify(old.schedule)
    ) {
      // A new schedule changes when the heartbeat is late: the runner looks again now.
      s.due = floorMinute(now);
      moveDue(op, old.due, s.due, id, account);
    }
    if (s.hook && (s.name !== old.name || runGrace(s) !== runGrace(old))) {
      putHookRef(op, s.hook, hookRef(s));
    }
    op.set(serviceKey(account, id), s);
    return { op, result: s };
  });
  if (out?.hook) forgetHooks(kv);
  return out;
}

/** Takes a removed channel off every service of the account. */
async function dropChannel(deps: Deps, account: number, channel: number): Promise<void> {
  for (const { service } of await listServices(deps.kv, account)) {
    if (!service.channels?.includes(channel)) continue;
    await patchService(deps, account, service.id, {
      channels: service.channels.filter((c) => c !== channel),
    });
  }
}

/** Deletes an alert channel and takes it off every service that chose it; false: no such channel. */
export async function removeChannel(
  deps: Deps,
  account: number,
  channel: number,
): Promise<boolean> {
  if (!await deleteChannel(deps, account, channel)) return false;
  await dropChannel(deps, account, channel);
  return true;
}

/** A new badge token for a service (the old address stops); null: no such service. */
export async function rotateBadge(deps: Deps, account: number, id: number): Promise<string | null> {
  const { kv } = deps;
  const token = randomToken(16);
  return await transact(async () => {
    const entry = await getService(kv, account, id);
    const s = entry.value;
    if (!s) return { op: null, result: null };
    const op = atomic(kv).check(entry)
      .set(serviceKey(account, id), { ...s, badge: token })
      .set(badgeKey(token), { account, id });
    if (s.badge) op.delete(badgeKey(s.badge));
    return { op, result: token };
  });
}

/** The service a badge token names, or null. */
export async function serviceByBadge(kv: Deno.Kv, token: string): Promise<Service | null> {
  const ref = (await kv.get<{ account: number; id: number }>(badgeKey(token))).value;
  if (!ref) return null;
  const s = (await getService(kv, ref.account, ref.id)).value;
  return s && s.badge === token ? s : null;
}

/** A new heartbeat key; the old one stops at once. Null: no such service. */
export async function rotateHook(deps: Deps, account: number, id: number): Promise<string | null> {
  const { kv } = deps;
  const key = randomToken(32);
  const hash = sha256hex(key);
  const done = await transact(async () => {
    const entry = await getService(kv, account, id);
    const s = entry.value;
    if (!s) return { op: null, result: false };
    if (s.kind !== "webhook") invalid("only a heartbeat service has a hook address to rotate");
    const op = atomic(kv).check(entry)
      .set(serviceKey(account, id), { ...s, hook: hash });
    putHookRef(op, hash, hookRef(s));
    if (s.hook) dropHookRef(op, s.hook);
    return { op, result: true };
  });
  forgetHooks(kv);
  return done ? key : null;
}

/** Adds the removal of a service and everything indexed with it to an atomic. */
function removeInto(
  op: Atomic,
  s: Service,
  count: Deno.KvEntryMaybe<Deno.KvU64>,
): Atomic {
  const left = Number(count.value?.value ?? 1n) - 1;
  op.check(count)
    .delete(serviceKey(s.account, s.id))
    .delete(byIdKey(s.id));
  dropDue(op, s.due, s.id);
  if (s.badge) op.delete(badgeKey(s.badge));
  if (left > 0) op.set(countKey(s.account), new Deno.KvU64(BigInt(left)));
  else op.delete(countKey(s.account));
  if (s.kind === "webhook") dropPulse(op, s.account, s.id);
  if (s.hook) dropHookRef(op, s.hook);
  return op;
}

export async function deleteService(deps: Deps, account: number, id: number): Promise<boolean> {
  const { kv } = deps;
  const done = await transact(async () => {
    const [entry, count] = await kv.getMany<[Service, Deno.KvU64]>([
      serviceKey(account, id),
      countKey(account),
    ]);
    if (!entry.value) return { op: null, result: false };
    return { op: removeInto(atomic(kv).check(entry), entry.value, count), result: true };
  });
  forgetHooks(kv);
  if (done) {
    await eraseHistory(kv, account, id);
    await eraseEvents(kv, account, id);
  }
  return done;
}

/** Removes every service of an account (erasure); answers how many. */
export async function eraseServices(deps: Deps, account: number): Promise<number> {
  const { kv } = deps;
  let n = 0;
  for await (const e of kv.list<Service>({ prefix: ["services", account] })) {
    const done = await transact(async () => {
      const [entry, count] = await kv.getMany<[Service, Deno.KvU64]>([e.key, countKey(account)]);
      if (!entry.value) return { op: null, result: false };
      return { op: removeInto(atomic(kv).check(entry), entry.value, count), result: true };
    });
    if (done) n++;
    await eraseHistory(kv, account, e.value.id);
    await eraseEvents(kv, account, e.value.id);
  }
  forgetHooks(kv);
  return n;
}

// ---- The runner's side: due index, lease, results, alerts ----

export interface DueItem {
  id: number;
  account: number;
  due: number;
  entry: Deno.KvEntry<number>;
}

/** Due entries, earliest first. */
export async function listDue(kv: Deno.Kv, now: number, limit: number): Promise<DueItem[]> {
  const out: DueItem[] = [];
  const iter = kv.list<number>(dueRange(now), {
    limit,
  });
  for await (const e of iter) {
    out.push({ due: e.key[1] as number, id: e.key[2] as number, account: e.value, entry: e });
  }
  return out;
}

/**
 * Takes the lease on one due check: moves its due entry to the end of the lease in one
 * atomic checked against the entry, so of several runners exactly one wins. Null: someone
 * else has it, or the service is gone.
 */
export async function claimDue(
  deps: Deps,
  item: DueItem,
): Promise<Service | null> {
  const { kv } = deps;
  const entry = await getService(kv, item.account, item.id);
  const s = entry.value;
  if (!s || (s.due !== item.due && s.kind !== "webhook")) {
    // A stale index entry (the service moved or is gone): drop it if still unchanged.
    if (!s) await commit(atomic(kv).check(item.entry).delete(item.entry.key));
    return null;
  }
  const until = deps.clock.now() + LEASE_MS;
  const claimed = { ...s, due: until };
  const op = atomic(kv).check(item.entry, entry).delete(item.entry.key);
  // Another entry of a heartbeat is a nudge a signal left (kv/hooks.ts): it claims the look,
  // and the regular entry goes with it.
  if (s.due !== item.due) dropDue(op, s.due, s.id);
  putDue(op, until, s.id, s.account);
  const res = await commit(op.set(serviceKey(s.account, s.id), claimed));
  return res.ok ? claimed : null;
}

function alertMail(
  deps: Deps,
  to: string,
  s: Service,
  state: Alert,
  status: string,
  now: number,
): Mail {
  return {
    ...serviceAlertMail(s, state, status, now, `${deps.config.baseUrl}/me/services/${s.id}`),
    to,
  };
}

function expiryMail(deps: Deps, to: string, s: Service, days: number, expires: number): Mail {
  return {
    ...certificateExpiryMail(s, days, expires, `${deps.config.baseUrl}/me/services/${s.id}`),
    to,
  };
}

/**
 * A check result applied to a service: the failure streak and threshold decide the state
 * shown; a certificate's expiry date is kept, and `expiry` names the mark (14, 7, 1 days)
 * reached for the first time on this certificate.
 */
export function counted(
  old: Service,
  result: CheckResult,
  now: number,
): { service: Service; expiry: number | null } {
  const threshold = old.threshold ?? 1;
  const failed = result.state !== "ok";
  const streak = failed ? (old.streak ?? 0) + 1 : 0;
  let state: State = result.state;
  let status = result.status;
  if (failed && streak < threshold) {
    // Not counted yet: the state stays what it was (ok, or wait before any result).
    state = old.last?.state ?? "wait";
    status = `${result.status} (failed check ${streak} of ${threshold} before an alert)`;
  } else if (failed && threshold > 1) {
    status = `${result.status} (${streak} failed checks in a row)`;
  }
  let cert = old.cert ?? null;
  let expiry: number | null = null;
  if (result.expires !== undefined) {
    if (!cert || cert.expires !== result.expires) cert = { expires: result.expires, alerted: null };
    const left = (result.expires - now) / DAY;
    const alerted = cert.alerted;
    const reached = EXPIRY_MARKS.filter((m) =>
      left > 0 && left <= m && (alerted === null || m < alerted)
    );
    if (reached.length > 0) {
      expiry = Math.min(...reached);
      cert = { ...cert, alerted: expiry };
    }
  }
  return {
    service: {
      ...old,
      last: { state, status, ms: result.ms, checked: now },
      streak,
      cert,
      seen: state,
    },
    expiry,
  };
}

/** The webhook payload of an alert (kv/channels.ts adds the Slack/Discord/ntfy fields). */
function alertPayload(
  deps: Deps,
  s: Service,
  event: Alert | "expiry",
  status: string,
  now: number,
): AlertPayload {
  const name = s.name.replace(/\p{Cc}+/gu, " ");
  const word = { off: "is off", back: "is back", reminder: "is still off" } as const;
  const title = event === "expiry"
    ? `Certificate of "${name}" expires soon`
    : `Watched service "${name}" ${word[event]}`;
  return {
    event,
    title,
    text: status,
    service: { id: s.id, name: s.name, kind: s.kind, state: s.seen, status },
    at: iso(now),
    link: `${deps.config.baseUrl}/me/services/${s.id}`,
  };
}

/** What a look at a service may send: an off or back alert, or a reminder while off. */
type Alert = "off" | "back" | "reminder";

/**
 * A reminder is due when the service is still off after an off alert, reminders are on, no
 * maintenance window holds it, and `remind` hours have passed since the last alert.
 */
const reminderDue = (old: Service, next: State, quiet: boolean, now: number) =>
  next === "off" && old.alerts && old.down_mailed && !!old.remind && !quiet &&
  old.alerted_at !== undefined && now - old.alerted_at >= old.remind * HOUR;

/** Queues the mail to the followers of a status page that may list the service. */
const followersAlert = (op: Atomic, s: Service, alert: "off" | "back", now: number) =>
  queueFanout(op, s.account, { kind: "service", service: s.id, name: s.name, state: alert }, now);

/**
 * The alert after a maintenance window's say: while one covers the service (`quiet`) an off
 * alert is held, not sent; once none does, a held alert of a service still off goes out. A
 * service that comes back meanwhile drops it (it never alerted, so no recovery either).
 */
function afterMaintenance(
  old: Service,
  next: State,
  alert: Alert | null,
  quiet: boolean,
): { alert: Alert | null; held: boolean } {
  if (alert === "off" && quiet) return { alert: null, held: true };
  if (next !== "off") return { alert, held: false };
  if (old.held && !quiet && !alert && old.alerts && !old.down_mailed) {
    return { alert: "off", held: false };
  }
  return { alert, held: alert === null && (old.held ?? false) };
}

/**
 * Off and back alerts, never repeated while a state holds. A checked service's first result
 * alerts nobody (its owner sees it on creating it). A heartbeat turns off only after its job
 * ran (a failure, a run past its grace, a success grown too old), so going off alerts from any
 * state the runner saw before, `wait` included: a first signal that is a failure, or a
 * success the runner had not looked at yet (its regular look is an interval away).
 */
function alertFor(s: Service, next: State): "off" | "back" | null {
  if (!s.alerts) return null;
  const was = s.seen === "ok" || s.seen === "warn" || (s.seen === "wait" && s.kind === "webhook");
  if (next === "off" && was && !s.down_mailed) return "off";
  if ((next === "ok" || next === "warn") && s.down_mailed) return "back";
  return null;
}

/**
 * Records a check result (and, for the runner, the next due time) in one atomic with any
 * alert mail. `nextDue` null keeps the schedule (manual checks).
 */
export async function recordResult(
  deps: Deps,
  account: number,
  id: number,
  result: CheckResult,
  nextDue: ((s: Service) => number) | null,
): Promise<Service | null> {
  const { kv } = deps;
  const now = deps.clock.now();
  const acc = (await getAccount(kv, account)).value;
  const windows = await listWindows(kv, account);
  const mails: string[] = [];
  const posts: string[] = [];
  const fanouts: string[] = [];
  const saved = await transact(async () => {
    mails.length = 0;
    posts.length = 0;
    fanouts.length = 0;
    const entry = await getService(kv, account, id);
    const old = entry.value;
    if (!old) return { op: null, result: null };
    const day = await readDay(kv, account, id, now);
    const next = counted(old, result, now);
    const quiet = maintenanceUntil(windows, old, now);
    const decided = afterMaintenance(
      old,
      next.service.seen,
      alertFor(old, next.service.seen),
      quiet !== null,
    );
    const held = decided.held;
    const alert: Alert | null = decided.alert ??
      (reminderDue(old, next.service.seen, quiet !== null, now) ? "reminder" : null);
    const s: Service = {
      ...next.service,
      down_mailed: alert === "off" ? true : alert === "back" ? false : old.down_mailed,
      held,
      alerted_at: alert === "off" || alert === "reminder" ? now : old.alerted_at,
    };
    const op = atomic(kv).check(entry);
    if (nextDue) {
      s.due = nextDue(old);
      // A held alert: a look right after the window ends.
      if (held && quiet !== null) s.due = Math.min(s.due, minuteAfter(quiet));
      moveDue(op, old.due, s.due, id, account);
    }
    addDuration(op, day, result.ms);
    if (s.seen !== old.seen) {
      s.since = now;
      recordChange(op, account, id, now, { state: s.seen, status: s.last!.status });
    }
    op.set(serviceKey(account, id), s);
    if (alert && acc) {
      mails.push(enqueueMail(op, alertMail(deps, acc.email, s, alert, s.last!.status, now), now));
    }
    // Followers hear of the change, not of reminders.
    if (alert && alert !== "reminder") fanouts.push(followersAlert(op, s, alert, now));
    if (next.expiry !== null && s.alerts && acc && s.cert) {
      const mail = expiryMail(deps, acc.email, s, next.expiry, s.cert.expires);
      mails.push(enqueueMail(op, mail, now));
    }
    const chans = (alert || (next.expiry !== null && s.alerts)) && s.channels?.length
      ? await channelsOf(kv, account, s.channels)
      : [];
    if (alert && chans.length) {
      posts.push(
        ...enqueuePosts(op, chans, alertPayload(deps, s, alert, s.last!.status, now), now),
      );
    }
    if (next.expiry !== null && s.alerts && s.cert && chans.length) {
      const days = next.expiry;
      const text = `The certificate expires ${iso(s.cert.expires)} (within ${days} day${
        days === 1 ? "" : "s"
      }).`;
      posts.push(...enqueuePosts(op, chans, alertPayload(deps, s, "expiry", text, now), now));
    }
    return { op, result: s };
  });
  await Promise.all([
    mails.length ? deliver(deps, mails) : null,
    posts.length ? deliverPosts(deps, posts) : null,
    ...fanouts.map((id) => runFanout(deps, id)),
  ]);
  return saved;
}

/**
 * The runner's look at a heartbeat: its state now, alerts on a change, and the next look:
 * when the last beat would turn it off, or a minute while it is off and mailed (to notice
 * its return), or one interval when it never beat.
 */
export async function reviewHeartbeat(deps: Deps, claimed: Service): Promise<void> {
  const { kv } = deps;
  const now = deps.clock.now();
  const acc = (await getAccount(kv, claimed.account)).value;
  const windows = await listWindows(kv, claimed.account);
  // What each alert queued, sent in order after the commit (a missed failure's off first).
  let sends: { mails: string[]; posts: string[]; fanouts: string[] }[] = [];
  await transact(async () => {
    sends = [];
    const [entry, pulse] = await Promise.all([
      getService(kv, claimed.account, claimed.id),
      getPulse(kv, claimed.account, claimed.id),
    ]);
    const old = entry.value;
    if (!old) return { op: null, result: null };
    const beat = pulse.beat;
    const state = pulseState(pulse, old, now);
    const failure = openFailure(pulse);
    const run = openRun(pulse);
    const runEnd = run ? run.at + runGrace(old) * MINUTE : null;
    const quiet = maintenanceUntil(windows, old, now);
    const decided = afterMaintenance(old, state, alertFor(old, state), quiet !== null);
    const held = decided.held;
    const alert: Alert | null = decided.alert ??
      (reminderDue(old, state, quiet !== null, now) ? "reminder" : null);
    // A failure that a success closed before this look (its nudge brings the look within the
    // minute): the heartbeat was off meanwhile, so it alerts off and back now. Records from
    // before `looked` existed have no such look to compare with. Not inside a maintenance
    // window: a failure there alerts nobody.
    const f = pulse.failed;
    const blip = quiet === null && f !== null && old.looked !== undefined && f.at > old.looked &&
      state !== "off" && old.seen !== "off" && old.alerts && !old.down_mailed;
    const s: Service = {
      ...old,
      seen: state,
      looked: Math.max(now, f?.at ?? 0),
      down_mailed: alert === "off" ? true : alert === "back" ? false : old.down_mailed,
      held,
      alerted_at: alert === "off" || alert === "reminder" ? now : old.alerted_at,
    };
    const i = old.interval * MINUTE;
    const lim = beat ? beatLimits(old, beat.at) : null;
    s.due = state === "off"
      ? floorMinute(now) + (s.down_mailed ? MINUTE : Math.min(i, HOUR))
      : !beat
      ? firstLook(old, now)
      : lim
      ? Math.max(floorMinute(now) + MINUTE, minuteAfter(lim.off))
      : floorMinute(now) + Math.max(i, HOUR);
    if (runEnd !== null && state !== "off") s.due = Math.min(s.due, minuteAfter(runEnd));
    // A held alert: a look right after the window ends.
    if (held && quiet !== null) s.due = Math.min(s.due, minuteAfter(quiet));
    const op = moveDue(atomic(kv).check(entry), old.due, s.due, old.id, old.account);
    const status = failure
      ? `failure signalled ${iso(failure.at)}${failure.status ? `: ${failure.status}` : ""}`
      : run && runEnd !== null && now > runEnd
      ? `run started ${iso(run.at)} did not end within the grace time`
      : beat
      ? `last heartbeat ${iso(beat.at)}`
      : "no heartbeat";
    let previous = old.since ?? 0;
    const blipStatus = f ? `failure signalled ${iso(f.at)}${f.status ? `: ${f.status}` : ""}` : "";
    if (blip) {
      previous = Math.min(now, Math.max(f.at, previous + 1));
      recordChange(op, old.account, old.id, previous, {
        state: "off",
        status: f.status || "failure signalled",
      });
    }
    if (state !== old.seen || blip) {
      // When it changed, as far as the signals tell; never before the previous change.
      const at = failure
        ? failure.at
        : state === "off" && runEnd !== null && now > runEnd
        ? runEnd + 1
        : !beat || !lim
        ? now
        : state === "ok"
        ? beat.at
        : state === "warn"
        ? lim.warn + 1
        : lim.off + 1;
      s.since = Math.min(now, Math.max(at, previous + 1));
      recordChange(op, old.account, old.id, s.since, { state, status: beat?.status ?? status });
    }
    op.set(serviceKey(old.account, old.id), s);
    // The alerts of this look, in order: a missed failure's off and back, or the change now.
    const alerts: { event: Alert; text: string; as: Service }[] = blip
      ? [
        { event: "off", text: blipStatus, as: { ...s, seen: "off" } },
        { event: "back", text: status, as: s },
      ]
      : alert
      ? [{ event: alert, text: status, as: s }]
      : [];
    const chans = alerts.length && s.channels?.length
      ? await channelsOf(kv, s.account, s.channels)
      : [];
    for (const a of alerts) {
      sends.push({
        mails: acc
          ? [enqueueMail(op, alertMail(deps, acc.email, a.as, a.event, a.text, now), now)]
          : [],
        posts: enqueuePosts(op, chans, alertPayload(deps, a.as, a.event, a.text, now), now),
        // Followers hear of the changes, not of reminders.
        fanouts: a.event === "reminder" ? [] : [followersAlert(op, a.as, a.event, now)],
      });
    }
    return { op, result: null };
  });
  for (const { mails, posts, fanouts } of sends) {
    await Promise.all([
      mails.length ? deliver(deps, mails) : null,
      posts.length ? deliverPosts(deps, posts) : null,
      ...fanouts.map((id) => runFanout(deps, id)),
    ]);
  }
  await trimEvents(kv, claimed.account, claimed.id);
}
