import { MINUTE } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { type Atomic, atomic, commit, deleteKeys, transact } from "./_atomic.ts";
import type { Service } from "./service_state.ts";
import { listServices } from "./services.ts";

/**
 * One alert for one outage (issue 24, part 1): the off and back alerts of an account's
 * services that share a place (or, without a place, a group) wait together for two minutes
 * and go out as one. A look that alerts (kv/service_results.ts) adds its alert to the pending
 * group of the service's place in its own atomic (`joinGroup`), the first one opening the
 * group with a due entry; the minutely runner takes due groups (kv/grouped_alerts.ts) in an
 * atomic checked against the group, so of several processes one sends it. Key layout:
 *   ["alert_groups", account_id, cluster]            -> Pending: the alerts waiting together
 *   ["alert_group_due", due_ms, account_id, cluster] -> true: when the group is sent
 *   ["alert_grouping", account_id]                   -> {grouping: false}: the account turned
 *                                                       grouping off (absent: on)
 * A service alone in its place or group never waits: it alerts at once, as before.
 */

/** How long a group waits for more alerts after the first one. */
export const GROUP_WAIT = 2 * MINUTE;
/**
 * Alerts kept per member (a service turning off and back again and again within the two
 * minutes), so a group of 30 services stays well under KV's 64 KiB per value.
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
  said: GroupedAlert[];
}

export interface Pending {
  account: number;
  cluster: string;
  /** The place or group as people read it ("LAN", "Public"). */
  label: string;
  opened: number;
  due: number;
  /** Services of the account in the place or group when the last alert joined. */
  total: number;
  /** Per service, its alerts in order. */
  members: Member[];
}

const groupKey = (account: number, cluster: string) => ["alert_groups", account, cluster] as const;
const dueKey = (due: number, account: number, cluster: string) =>
  ["alert_group_due", due, account, cluster] as const;
const settingKey = (account: number) => ["alert_grouping", account] as const;

/** Services grouped together: the same place, or the same group when neither has a place. */
export const clusterOf = (s: Pick<Service, "place" | "group">) =>
  s.place ? `place:${s.place}` : `group:${s.group}`;
const labelOf = (s: Pick<Service, "place" | "group">) => s.place ?? s.group;

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
 * Adds a look's off and back alerts of `s` to the pending group of its place, in the look's
 * atomic `op` (checked against the group, so concurrent looks and the sender serialise).
 * False, and nothing added: the alerts go out at once (grouping off, a reminder, or no other
 * service of the account shares the place or group), unless an alert of the service waits in
 * the group already: then this one follows it there, so a back never goes out before its off.
 */
export async function joinGroup(
  kv: Deno.Kv,
  op: Atomic,
  s: Service,
  said: { event: string; text: string; as: Subject }[],
  now: number,
): Promise<boolean> {
  if (!said.length || said.some((a) => a.event !== "off" && a.event !== "back")) return false;
  const cluster = clusterOf(s);
  const entry = await kv.get<Pending>(groupKey(s.account, cluster));
  const waiting = entry.value?.members.some((m) => m.id === s.id) ?? false;
  if (!waiting && !await groupingOf(kv, s.account)) return false;
  const total = (await listServices(kv, s.account))
    .filter(({ service }) => clusterOf(service) === cluster).length;
  if (!waiting && total < 2) return false;
  op.check(entry);
  const g: Pending = entry.value ?? {
    account: s.account,
    cluster,
    label: labelOf(s),
    opened: now,
    due: now + GROUP_WAIT,
    total,
    members: [],
  };
  if (!entry.value) op.set(dueKey(g.due, g.account, cluster), true);
  const added: GroupedAlert[] = said.map((a) => ({
    event: a.event as GroupedAlert["event"],
    text: a.text,
    at: now,
    seen: a.as.seen,
  }));
  const as = subjectOf(said[said.length - 1].as);
  const member = g.members.find((m) => m.id === s.id);
  if (member) Object.assign(member, { as, said: keptAlerts([...member.said, ...added]) });
  else g.members.push({ id: s.id, as, said: added });
  g.total = Math.max(total, g.members.length);
  op.set(groupKey(g.account, cluster), g);
  return true;
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
  send: (op: Atomic, g: Pending) => Promise<T>,
): Promise<T | null> {
  return await transact(async () => {
    const [entry, dueNow] = await kv.getMany<[Pending, true]>([
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
export async function listGroupsOf(kv: Deno.Kv, account: number): Promise<Pending[]> {
  const out: Pending[] = [];
  for await (const e of kv.list<Pending>({ prefix: ["alert_groups", account] })) out.push(e.value);
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
