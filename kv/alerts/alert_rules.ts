/**
 * When a watched service alerts, without storage: a check result counted against the
 * threshold, off and back alerts, maintenance windows holding an off alert, reminders while
 * off. Pure functions of their inputs (kv/service/looks.ts applies them). Holds no keys.
 */
import { DAY, HOUR } from "../../lib/clock.ts";
import type { CheckResult } from "../../lib/checks/mod.ts";
import type { Service, State } from "../service/state.ts";

/** Days left on a certificate at which one expiry alert goes out each. */
export const EXPIRY_MARKS = [14, 7, 1] as const;

/** What a look at a service may send: an off or back alert, or a reminder while off. */
export type StateAlert = "off" | "back" | "reminder";

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

/**
 * Off and back alerts, never repeated while a state holds. Every off alerts once its
 * threshold is met, whatever the state before: a check failing from its first result (the
 * creation shows that result without a mail, so the next failing look alerts), a check
 * imported failing, a heartbeat whose first signal is a failure. Nothing leaves a service off
 * without an alert but alerts turned off or a maintenance window (afterMaintenance).
 */
function alertFor(s: Service, next: State): "off" | "back" | null {
  if (!s.alerts) return null;
  if (next === "off" && !s.down_mailed) return "off";
  if ((next === "ok" || next === "warn") && s.down_mailed) return "back";
  return null;
}

/**
 * The alert after a maintenance window's say: while one covers the service (`quiet`) an off
 * alert is held, not sent; once none does, a held alert of a service still off goes out. A
 * service that comes back meanwhile drops it (it never alerted, so no recovery either).
 */
function afterMaintenance(
  old: Service,
  next: State,
  alert: StateAlert | null,
  quiet: boolean,
): { alert: StateAlert | null; held: boolean } {
  if (alert === "off" && quiet) return { alert: null, held: true };
  if (next !== "off") return { alert, held: false };
  if (old.held && !quiet && !alert && old.alerts && !old.down_mailed) {
    return { alert: "off", held: false };
  }
  return { alert, held: alert === null && (old.held ?? false) };
}

/**
 * A reminder is due when the service is still off after an off alert, reminders are on, no
 * maintenance window holds it, and `remind` hours have passed since the last alert.
 */
const reminderDue = (old: Service, next: State, quiet: boolean, now: number) =>
  next === "off" && old.alerts && old.down_mailed && !!old.remind && !quiet &&
  old.alerted_at !== undefined && now - old.alerted_at >= old.remind * HOUR;

/**
 * What a look that finds `next` sends, and the record's alert fields after it: an off or back
 * alert (held while a maintenance window runs, until `quiet`), else a reminder when due.
 */
export function decideAlert(
  old: Service,
  next: State,
  quiet: number | null,
  now: number,
): { alert: StateAlert | null; marks: Pick<Service, "down_mailed" | "held" | "alerted_at"> } {
  const decided = afterMaintenance(old, next, alertFor(old, next), quiet !== null);
  const alert = decided.alert ?? (reminderDue(old, next, quiet !== null, now) ? "reminder" : null);
  return {
    alert,
    marks: {
      down_mailed: alert === "off" ? true : alert === "back" ? false : old.down_mailed,
      held: decided.held,
      alerted_at: alert === "off" || alert === "reminder" ? now : old.alerted_at,
    },
  };
}
