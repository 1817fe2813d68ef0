/**
 * What the runner (and a manual check) finds at a service, recorded with its alerts: a check's
 * result (recordResult) and a heartbeat judged from its signals (reviewHeartbeat). Each look
 * is one atomic holding the record, its history, its next due time and every alert it queues
 * (mail, channel posts, the status page followers' mail: deliveries of kv/alerts/outbox.ts);
 * they are sent after the commit, each receiver's in order. The off and back alerts of a service sharing its place (or group)
 * with another are routed through kv/alerts/alert_groups.ts in the same atomic: the first off of an
 * outage goes at once, follow-ups wait in the place's group, which kv/alerts/grouped_alerts.ts sends.
 * The rules are kv/alerts/alert_rules.ts's. Holds no keys: the record, with its next due time, is
 * written with the aggregate's `saveService` (kv/service/store.ts), which moves the due entry.
 */
import { iso, readable } from "../../lib/clock.ts";
import type { CheckResult } from "../../lib/checks/mod.ts";
import type { Deps } from "../../lib/deps.ts";
import type { Mail } from "../../lib/mail.ts";
import { type Atomic, atomic, transact } from "../_atomic.ts";
import { type Account, getAccount } from "../accounts/accounts.ts";
import { counted, decideAlert, type StateAlert } from "../alerts/alert_rules.ts";
import { routeAlerts, type Subject } from "../alerts/alert_groups.ts";
import { type AlertPayload, type Channel, channelsOf } from "../alerts/channels.ts";
import { addDuration, readDay, recordChange } from "./history.ts";
import { getPulse, trimEvents } from "./heartbeats.ts";
import { listWindows, maintenanceUntil } from "./maintenance.ts";
import { gapAt } from "./monitor.ts";
import { deliver, enqueueFollowers, enqueueMail, enqueuePosts } from "../alerts/outbox.ts";
import {
  beatLimits,
  type BeatVerdict,
  judgeBeat,
  minuteAfter,
  nextLook,
  openFailure,
  openRun,
  type Pulse,
  runGrace,
  runsNote,
  type Service,
  type State,
} from "./state.ts";
import { addEarlyDue, getService, queueLook, saveService, wakeAt } from "./store.ts";
import { hookRefsInto, listServices } from "./commands.ts";
import { behindOff, dependencyHold, foldedText } from "./dependencies.ts";
import { certificateExpiryMail, serviceAlertMail } from "../../mail/services.ts";

/** What one alert queued in a look's atomic (the outbox's ids), sent after the commit. */
export type QueuedAlert = string[];

/** One alert: what it says of the service, as the service reads in it (and when, if not now). */
interface AlertNotice {
  event: StateAlert;
  text: string;
  as: Subject;
  at?: number;
}

const serviceLink = (deps: Deps, s: Pick<Service, "id">) =>
  `${deps.config.baseUrl}/me/services/${s.id}`;

function alertMail(deps: Deps, to: string, a: AlertNotice, now: number): Mail {
  const at = a.at ?? now;
  return { ...serviceAlertMail(a.as, a.event, a.text, at, serviceLink(deps, a.as)), to };
}

/** The webhook payload of an alert (kv/alerts/channels.ts adds the Slack/Discord/ntfy fields). */
function alertPayload(
  deps: Deps,
  s: Subject,
  event: StateAlert | "expiry",
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
    link: serviceLink(deps, s),
  };
}

/** Queues one alert: the owner's mail, a post per channel, and (not for reminders) the mail to
 * the followers of a status page that may list the service. */
export function queueAlert(
  deps: Deps,
  op: Atomic,
  acc: Account | null,
  chans: Channel[],
  a: AlertNotice,
  now: number,
): QueuedAlert {
  const event = a.event;
  const thread = [a.as.id];
  return [
    ...acc ? [enqueueMail(op, alertMail(deps, acc.email, a, now), now, thread)] : [],
    ...enqueuePosts(op, chans, alertPayload(deps, a.as, event, a.text, a.at ?? now), now, thread),
    ...event === "reminder" ? [] : [
      enqueueFollowers(op, a.as.account, {
        kind: "service",
        service: a.as.id,
        name: a.as.name,
        state: event,
      }, now),
    ],
  ];
}

/** Queues the alert of a certificate reaching an expiry mark (`days` left). */
function queueExpiry(
  deps: Deps,
  op: Atomic,
  acc: Account | null,
  chans: Channel[],
  s: Service & { cert: { expires: number } },
  days: number,
  now: number,
): QueuedAlert {
  const expires = s.cert.expires;
  const link = serviceLink(deps, s);
  const mail = acc ? { ...certificateExpiryMail(s, days, expires, link), to: acc.email } : null;
  const text = `The certificate expires ${readable(expires)} (within ${days} day${
    days === 1 ? "" : "s"
  }).`;
  return [
    ...mail ? [enqueueMail(op, mail, now, [s.id])] : [],
    ...enqueuePosts(op, chans, alertPayload(deps, s, "expiry", text, now), now, [s.id]),
  ];
}

/**
 * Sends what the alerts queued: the outbox sends each receiver's in the order they were
 * queued, so an off goes before its back everywhere.
 */
export async function sendInOrder(deps: Deps, sends: QueuedAlert[]): Promise<void> {
  await deliver(deps, sends.flat());
}

/** The account's channels a service alerts, read only when something is to be sent. */
export const alertChannels = async (deps: Deps, s: Subject, sending: boolean) =>
  sending && s.channels?.length ? await channelsOf(deps.kv, s.account, s.channels) : [];

/**
 * Where a look's alerts (decided by kv/alerts/alert_rules.ts `decideAlert`) are routed and queued, in
 * the look's atomic `op`, for checks and heartbeats alike: the one place to extend what holds
 * or folds an alert before it goes (an outage's follow-ups wait in its place's group,
 * kv/alerts/alert_groups.ts `routeAlerts`); what goes at once is queued to the account's mail, each
 * channel and the followers, in order. `channels`: the service's channels are wanted even
 * without an alert (a certificate's expiry). Answers what was queued, to send after the
 * commit, and the channels read.
 */
async function dispatchAlerts(
  deps: Deps,
  op: Atomic,
  acc: Account | null,
  s: Service,
  said: AlertNotice[],
  now: number,
  channels = false,
): Promise<{ sends: QueuedAlert[]; chans: Channel[] }> {
  // Follow-ups of an outage at its place wait for the others (kv/alerts/alert_groups.ts).
  const atOnce = await routeAlerts(deps.kv, op, s, said, now) as AlertNotice[];
  const chans = await alertChannels(deps, s, atOnce.length > 0 || channels);
  return { sends: atOnce.map((a) => queueAlert(deps, op, acc, chans, a, now)), chans };
}

/**
 * Records a check result (and, for the runner, the next due time) in one atomic with any
 * alert. `nextDue` null keeps the schedule (manual checks).
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
  let sends: QueuedAlert[] = [];
  const saved = await transact(async () => {
    sends = [];
    const entry = await getService(kv, account, id);
    const old = entry.value;
    if (!old) return { op: null, result: null };
    const day = await readDay(kv, account, id, now);
    const next = counted(old, result, now);
    const all = await dependencyView(kv, old, next.service.seen, now);
    const quiet = maintenanceUntil(windows, old, now) ??
      dependencyHold(all, old, next.service.seen, now);
    const { alert, marks } = decideAlert(old, next.service.seen, quiet, now);
    const s: Service = { ...next.service, ...marks };
    const op = atomic(kv).check(entry);
    if (s.seen !== "off" && old.seen === "off") wakeBehind(op, all, s, now);
    if (nextDue) {
      s.due = nextDue(old);
      // A held alert: a look right after the window ends.
      if (marks.held && quiet !== null) s.due = Math.min(s.due, minuteAfter(quiet));
    }
    addDuration(op, day, result.ms, now, result.state);
    if (s.seen !== old.seen) {
      s.since = now;
      recordChange(op, account, id, now, { state: s.seen, status: s.last!.status });
    }
    saveService(op, old, s);
    const expiry = next.expiry !== null && s.alerts && s.cert ? next.expiry : null;
    const text = alert === "off" ? foldedText(s.last!.status, behindOff(all, s)) : s.last!.status;
    const said: AlertNotice[] = alert ? [{ event: alert, text, as: s }] : [];
    const routed = await dispatchAlerts(deps, op, acc, s, said, now, expiry !== null);
    sends.push(...routed.sends);
    if (expiry !== null) {
      sends.push(queueExpiry(deps, op, acc, routed.chans, { ...s, cert: s.cert! }, expiry, now));
    }
    return { op, result: s };
  });
  await sendInOrder(deps, sends);
  return saved;
}

const failureText = (f: NonNullable<Pulse["failed"]>) =>
  `failure signalled ${readable(f.at)}${f.status ? `: ${f.status}` : ""}`;

/** What a heartbeat's signals say at `now`, for alerts and history (with the runs counted). */
function heartbeatStatus(s: Service, v: BeatVerdict, runEnd: number | null, now: number): string {
  const pulse = v.pulse;
  const failure = openFailure(pulse);
  const run = openRun(pulse);
  const note = runsNote(v, s.threshold ?? 1);
  if (v.paused) return `paused since ${readable(s.paused_at!)}`;
  if (failure) return failureText(failure) + note;
  if (run && runEnd !== null && now > runEnd) {
    return `run started ${readable(run.at)} did not end within the grace time${note}`;
  }
  if (v.short) return v.short + note;
  return (pulse?.beat ? `last heartbeat ${readable(pulse.beat.at)}` : "no heartbeat") + note;
}

/**
 * The account's services as stored, read only when a dependency may matter: the look finds
 * the service off, or it was off (its return wakes the services behind it).
 */
async function dependencyView(
  kv: Deno.Kv,
  s: Service,
  state: string,
  now: number,
): Promise<Service[]> {
  if (state !== "off" && s.seen !== "off") return [];
  // A heartbeat as its signals say now: a parent's failure ping counts before its own look.
  return (await listServices(kv, s.account)).map(({ service, beat }) =>
    service.kind === "webhook" && service.id !== s.id
      ? { ...service, seen: judgeBeat(beat, service, now).state }
      : service
  );
}

/**
 * A service back: the heartbeats behind it still off, whose off alert it held, are looked at
 * within seconds (a nudge and its queued look, kv/service/store.ts), so each alerts on its own at
 * once; a checked one is looked at in the minute its hold ends.
 */
function wakeBehind(op: Atomic, all: Service[], s: Pick<Service, "id" | "account">, now: number) {
  for (const c of behindOff(all, s)) {
    if (c.kind !== "webhook" || !c.held) continue;
    addEarlyDue(op, now, c.id, s.account);
    queueLook(op, { account: s.account, id: c.id, due: now });
  }
}

/**
 * What an off alert adds when the heartbeat's deadline fell while this monitor was not
 * running (kv/service/monitor.ts): a ping sent then reached nobody, so it is judged now, once.
 */
async function downNote(kv: Deno.Kv, offAt: number, now: number): Promise<string> {
  const gap = await gapAt(kv, offAt, now);
  return gap
    ? `; its deadline passed while this monitor was down (${readable(gap.from)} to ${
      readable(gap.to)
    }), so a ping sent then was not received: judged now that the monitor runs again`
    : "";
}

/** When a heartbeat turned `state`, as far as its signals tell. */
function changedAt(s: Service, v: BeatVerdict, state: State, runEnd: number | null, now: number) {
  const pulse = v.pulse;
  const failure = openFailure(pulse);
  const beat = pulse?.beat;
  const lim = beat ? beatLimits(s, beat.at) : null;
  if (v.paused) return now;
  if (failure) return failure.at;
  if (state === "off" && runEnd !== null && now > runEnd) return runEnd + 1;
  if (state === "off" && v.offSince !== null) return v.offSince + 1;
  if (!beat || !lim) return now;
  return state === "ok" ? beat.at : state === "warn" ? lim.warn + 1 : lim.off + 1;
}

/**
 * A failure that a success closed before this look (its nudge brings the look within the
 * minute): the heartbeat was off meanwhile, so it alerts off and back now. Null when there is
 * none, or it alerts nobody: below the threshold, inside a maintenance window (`quiet`), while
 * paused, or for records from before `looked` existed (no look to compare with).
 */
function closedFailure(old: Service, v: BeatVerdict, quiet: number | null) {
  const f = v.pulse?.failed ?? null;
  const missed = quiet === null && !v.paused && f !== null && old.looked !== undefined &&
    f.at > old.looked && v.state !== "off" && old.seen !== "off" && old.alerts &&
    !old.down_mailed && v.count.peak >= (old.threshold ?? 1);
  return missed ? f : null;
}

/**
 * A success that a failure followed before this look, of a heartbeat that waited or was off:
 * it was up meanwhile (Healthchecks' flip at that ping), so the history has it up then. Null
 * when there is none.
 */
function risenBefore(old: Service, v: BeatVerdict) {
  const b = v.pulse?.beat ?? null;
  const f = v.pulse?.failed ?? null;
  const rose = b !== null && f !== null && old.looked !== undefined && b.at > old.looked &&
    f.at > b.at && v.state === "off" && (old.seen === "wait" || old.seen === "off");
  return rose ? b : null;
}

/**
 * A look's changes in the history: a success that rose before a failure, a closed failure's
 * off, then the state now if it changed (`s.since`, never before the previous change), each
 * at the moment of its signal.
 */
function recordLook(
  op: Atomic,
  old: Service,
  s: Service,
  v: BeatVerdict,
  blip: NonNullable<Pulse["failed"]> | null,
  runEnd: number | null,
  status: string,
  now: number,
) {
  let previous = old.since ?? 0;
  const rise = risenBefore(old, v);
  if (rise) {
    previous = Math.min(now, Math.max(rise.at, previous + 1));
    recordChange(op, old.account, old.id, previous, { state: "ok", status: rise.status });
  }
  if (blip) {
    previous = Math.min(now, Math.max(blip.at, previous + 1));
    recordChange(op, old.account, old.id, previous, {
      state: "off",
      status: blip.status || "failure signalled",
    });
  }
  if (v.state !== old.seen || blip || rise) {
    s.since = Math.min(now, Math.max(changedAt(old, v, v.state, runEnd, now), previous + 1));
    recordChange(op, old.account, old.id, s.since, {
      state: v.state,
      status: v.pulse?.beat?.status ?? status,
    });
  }
}

/**
 * The runner's look at a heartbeat: its state now, the change in its history, alerts on a
 * change, and the next look (nextLook). `trim` also cuts its events to the newest kept: the
 * dearest part of a look (every kept event is read, bodies and all), so a look a failure asked
 * for leaves it to the runner's looks, which a flood of events nudges (kv/service/heartbeats.ts).
 */
export async function reviewHeartbeat(
  deps: Deps,
  claimed: Service,
  trim = true,
): Promise<void> {
  const { kv } = deps;
  const now = deps.clock.now();
  const acc = (await getAccount(kv, claimed.account)).value;
  const windows = await listWindows(kv, claimed.account);
  let sends: QueuedAlert[] = [];
  await transact(async () => {
    sends = [];
    const [entry, signals] = await Promise.all([
      getService(kv, claimed.account, claimed.id),
      getPulse(kv, claimed.account, claimed.id),
    ]);
    const old = entry.value;
    if (!old) return { op: null, result: null };
    // Its runs judged (threshold, minimum duration, pause): the signals since a resume.
    const v = judgeBeat(signals, old, now);
    const pulse = v.pulse ?? { beat: null, start: null, failed: null };
    const state = v.state;
    const run = openRun(pulse);
    const runEnd = run ? run.at + runGrace(old) * 1000 : null;
    const all = await dependencyView(kv, old, state, now);
    const quiet = maintenanceUntil(windows, old, now) ?? dependencyHold(all, old, state, now);
    const { alert, marks } = decideAlert(old, state, quiet, now);
    const f = pulse.failed;
    const blip = closedFailure(old, v, quiet);
    const s: Service = {
      ...old,
      ...marks,
      seen: state,
      looked: Math.max(now, f?.at ?? 0),
      streak: v.count.streak,
      judged: v.count.judged,
    };
    s.due = nextLook(s, v, runEnd, marks.held ? quiet : null, now);
    const op = atomic(kv).check(entry);
    let status = heartbeatStatus(old, v, runEnd, now);
    if (alert === "off") {
      status += await downNote(kv, changedAt(old, v, state, runEnd, now), now);
      status = foldedText(status, behindOff(all, old));
    }
    if (state !== "off" && old.seen === "off") wakeBehind(op, all, old, now);
    recordLook(op, old, s, v, blip, runEnd, status, now);
    // Whether its next success asks for a look (it waits or is off now) is in its hook entries.
    await hookRefsInto(kv, op, old, s);
    saveService(op, old, s);
    wakeAt(op, s.due, now);
    // The alerts of this look, in order: a missed failure's off and back, or the change now.
    const said: AlertNotice[] = blip
      ? [
        { event: "off", text: failureText(blip), as: { ...s, seen: "off" } },
        { event: "back", text: status, as: s },
      ]
      : alert
      ? [{ event: alert, text: status, as: s }]
      : [];
    sends = (await dispatchAlerts(deps, op, acc, s, said, now)).sends;
    return { op, result: null };
  });
  await sendInOrder(deps, sends);
  if (trim) await trimEvents(kv, claimed.account, claimed.id);
}
