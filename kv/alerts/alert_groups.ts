import type { Deps } from "../../lib/deps.ts";
import { type Atomic, atomic, commit, deleteKeys, transact } from "../_atomic.ts";
import { serviceEntries, wakeAt } from "../service/store.ts";
import type { Service } from "../service/state.ts";
import type { GROUPS } from "../service/commands.ts";

/**
 * One outage, few alerts: the first off alert of services that share a place (or a named
 * group) goes out at once and opens a 30-second window (GROUP_WAIT); the off and back alerts of the
 * others that follow within it wait and go out as one follow-up ("LAN: 2 more services
 * off"), and back alerts wait as long for the others to come back with them (one
 * summary). A look that alerts (kv/service/looks.ts) routes its alerts here in its own
 * atomic (`routeAlerts`): what must go at once comes back to it, what waits is added to the
 * pending group of the place; the minutely runner takes due groups (kv/alerts/grouped_alerts.ts) in
 * an atomic checked against the group, so of several processes one sends it. Key layout:
 *   ["alert_groups", account_id, cluster]            -> AlertGroup: the window's alerts
 *   ["alert_group_due", due_ms, account_id, cluster] -> true: when the group is sent
 *   ["alert_grouping", account_id]                   -> {grouping: false}: the account turned
 *                                                       grouping off (absent: on)
 * The default group ("Public") is no shared cause: its services without a place never group.
 * An off alert never waits in a group, except as a follow-up of another service's off sent
 * at once; a service whose alert waits sends it before a new off of its own, so its alerts
 * keep their order.
 */

/**
 * How long a window stays open for follow-ups after the alert that opened it: Prometheus
 * Alertmanager's `group_wait`, 30 s. Its follow-up (or summary) leaves within seconds of
 * its end: its due entry is polled every few seconds and woken through the queue.
 */
export const GROUP_WAIT = 30_000;
/** The group every service has unless given another: no shared cause, so it never groups. */
export const DEFAULT_GROUP: typeof GROUPS[number] = "Public";
/**
 * Alerts kept per member (a service turning off and back again and again within the 30
 * seconds), so a group of 30 services stays well under KV's 64 KiB per value.
 */
const MAX_SAID = 3;

/** What a grouped alert says of its service, as the service read then. */
export type Subject = Pick<
  Service,
  | "id"
  | "account"
  | "name"
  | "kind"
  | "seen"
  | "streak"
  | "threshold"
  | "remind"
  | "since"
  | "channels"
>;

/** One alert of a member: off or back, its status text, when, and the state it left. */
export interface GroupedAlert {
  event: "off" | "back";
  text: string;
  at: number;
  seen: Service["seen"];
}

export interface Member {
  id: number;
  /** The service as its last alert read it. */
  as: Subject;
  /** Its alerts waiting to go out with the group, in order (none: all went at once). */
  said: GroupedAlert[];
  /** Its last alert sent at once within the window (its off opened or joined the outage). */
  sent?: "off" | "back";
}

export interface AlertGroup {
  account: number;
  cluster: string;
  /** The place or group as people read it ("LAN", "Jobs"). */
  label: string;
  opened: number;
  due: number;
  /** Services of the account in the place or group when the last alert joined. */
  total: number;
  /** Per service, its alerts in order. */
  members: Member[];
}

/** An alert a look routes: its event and text, and the service as it reads in it. */
export interface Routed {
  event: string;
  text: string;
  as: Subject;
  at?: number;
}

const groupKey = (account: number, cluster: string) => ["alert_groups", account, cluster] as const;
const dueKey = (due: number, account: number, cluster: string) =>
  ["alert_group_due", due, account, cluster] as const;
const settingKey = (account: number) => ["alert_grouping", account] as const;

/** Services grouped together: the same place, or the same group when neither has a place. */
export const clusterOf = (s: Pick<Service, "place" | "group">) =>
  s.place ? `place:${s.place}` : `group:${s.group}`;
const labelOf = (s: Pick<Service, "place" | "group">) => s.place ?? s.group;
/** Whether a service shares a cause with others: a place, or a group chosen for it. */
const groupable = (s: Pick<Service, "place" | "group">) =>
  s.place !== null || s.group !== DEFAULT_GROUP;

const subjectOf = (s: Subject): Subject => ({
  id: s.id,
  account: s.account,
  name: s.name,
  kind: s.kind,
  seen: s.seen,
  streak: s.streak,
  threshold: s.threshold,
  remind: s.remind,
  since: s.since,
  channels: s.channels,
});

/** Whether the account groups its alerts (on unless turned off). */
export async function groupingOf(kv: Deno.Kv, account: number): Promise<boolean> {
  return (await kv.get<{ grouping: boolean }>(settingKey(account))).value?.grouping ?? true;
}

/** Turns grouping on or off for the account; a group already pending is still sent. */
export async function setGrouping(deps: Deps, account: number, on: boolean): Promise<boolean> {
  const op = atomic(deps.kv);
  if (on) op.delete(settingKey(account));
  else op.set(settingKey(account), { grouping: false });
  await commit(op);
  return on;
}

/**
 * Routes a look's alerts of `s`, in the look's atomic `op` (checked against the group, so
 * concurrent looks and the sender serialise): answers those to send at once, in order, and
 * adds the others to the pending group of its place. With grouping on and another service
 * sharing a place (or named group): an off goes at once and opens a window, unless another
 * service's off opened one still open (then it waits as a follow-up); a back waits for the
 * others' (one summary). An alert of the service already waiting keeps its place: a back
 * waits behind it, an off that goes at once takes the waiting ones with it, first.
 * Reminders, and everything without grouping, go at once.
 */
export async function routeAlerts<A extends Routed>(
  kv: Deno.Kv,
  op: Atomic,
  s: Service,
  said: A[],
  now: number,
): Promise<Routed[]> {
  if (!said.length || said.some((a) => a.event !== "off" && a.event !== "back")) return said;
  const cluster = clusterOf(s);
  const entry = await kv.get<AlertGroup>(groupKey(s.account, cluster));
  const waiting = entry.value?.members.some((m) => m.id === s.id && m.said.length > 0) ?? false;
  let total = 0;
  let grouping = groupable(s) && await groupingOf(kv, s.account);
  if (grouping) {
    for await (const e of serviceEntries(kv, s.account)) {
      if (clusterOf(e.value) === cluster) total++;
    }
    grouping = total >= 2;
  }
  if (!waiting && !grouping) return said;
  op.check(entry);
  const g: AlertGroup = entry.value ?? {
    account: s.account,
    cluster,
    label: labelOf(s),
    opened: now,
    due: now + GROUP_WAIT,
    total,
    members: [],
  };
  let member = g.members.find((m) => m.id === s.id);
  if (!member) g.members.push(member = { id: s.id, as: subjectOf(said[0].as), said: [] });
  const open = now < g.due;
  const outage = g.members.some((m) => m.id !== s.id && m.sent === "off");
  const atOnce: Routed[] = [];
  for (const a of said) {
    const event = a.event as GroupedAlert["event"];
    const wait = event === "back" ? grouping || member.said.length > 0 : grouping && open && outage;
    if (wait) {
      member.said = keptAlerts([...member.said, { event, text: a.text, at: now, seen: a.as.seen }]);
      member.as = subjectOf(a.as);
      continue;
    }
    // At once, after what of it waited.
    for (const w of member.said) {
      atOnce.push({ event: w.event, text: w.text, at: w.at, as: { ...member.as, seen: w.seen } });
    }
    member.said = [];
    member.sent = event;
    member.as = subjectOf(a.as);
    atOnce.push(a);
  }
  g.total = Math.max(total, g.total, g.members.length);
  if (!entry.value) wakeAt(op.set(dueKey(g.due, g.account, cluster), true), g.due, now);
  op.set(groupKey(g.account, cluster), g);
  return atOnce;
}

/**
 * A member's alerts alternate (off, back, off, ...): past MAX_SAID (3) the first and the last
 * are kept, with the one before the last when that keeps them alternating, so the alerts sent
 * still pair and end in the service's state.
 */
export function keptAlerts(said: GroupedAlert[]): GroupedAlert[] {
  const n = said.length;
  if (n <= MAX_SAID) return said;
  return n % 2 === 0 ? [said[0], said[n - 1]] : [said[0], said[n - 2], said[n - 1]];
}

/** A due group as listed: its account, place and the due entry. */
export interface DueGroup {
  account: number;
  cluster: string;
  entry: Deno.KvEntry<true>;
}

/** Groups due up to `now`, earliest first. */
export async function listDueGroups(kv: Deno.Kv, now: number, limit = 500): Promise<DueGroup[]> {
  const out: DueGroup[] = [];
  const iter = kv.list<true>({
    start: ["alert_group_due"],
    end: ["alert_group_due", now + 1],
  }, { limit });
  for await (const e of iter) {
    out.push({ account: e.key[2] as number, cluster: e.key[3] as string, entry: e });
  }
  return out;
}

/**
 * Takes a due group: `send` adds its alerts to the atomic that deletes the group and its due
 * entry, checked against both, so of several processes exactly one sends it. Answers what
 * `send` gave, or null when someone else took it.
 */
export async function takeGroup<T>(
  kv: Deno.Kv,
  due: DueGroup,
  send: (op: Atomic, g: AlertGroup) => Promise<T>,
): Promise<T | null> {
  return await transact(async () => {
    const [entry, dueNow] = await kv.getMany<[AlertGroup, true]>([
      groupKey(due.account, due.cluster),
      due.entry.key,
    ]);
    const op = atomic(kv).check(entry, dueNow).delete(due.entry.key);
    const g = entry.value;
    // A group's due entry without its group (or of an older one): only the entry goes.
    if (!g || g.due !== due.entry.key[1]) return { op: dueNow.value ? op : null, result: null };
    op.delete(entry.key);
    return { op, result: await send(op, g) };
  });
}

/** The account's pending groups (export). */
export async function listGroupsOf(kv: Deno.Kv, account: number): Promise<AlertGroup[]> {
  const out: AlertGroup[] = [];
  for await (const e of kv.list<AlertGroup>({ prefix: ["alert_groups", account] })) {
    out.push(e.value);
  }
  return out;
}

/** Deletes the account's pending groups, their due entries and its setting (erasure). */
export async function eraseGroups(kv: Deno.Kv, account: number): Promise<number> {
  const groups = await listGroupsOf(kv, account);
  await deleteKeys(kv, [
    ...groups.flatMap((g) => [groupKey(account, g.cluster), dueKey(g.due, account, g.cluster)]),
    settingKey(account),
  ]);
  return groups.length;
}
