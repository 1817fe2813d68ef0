/**
 * Sends the pending alert groups whose 30 seconds are over (kv/alerts/alert_groups.ts), for the
 * minutely runner: the alerts that waited in them (the follow-ups of an outage whose first
 * alert went at once, and the backs). One service's go out as that service's own alerts (the
 * same mail, posts and follower mail as without grouping); several services' as one mail to
 * the account, one post per channel any of them alerts and one mail to each follower of the
 * status page. Holds no keys.
 */
import { iso } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { groupAlertMail } from "../../mail/services.ts";
import type { Atomic } from "../_atomic.ts";
import { type Account, getAccount } from "../accounts/accounts.ts";
import { type AlertGroup, listDueGroups, type Member, takeGroup } from "./alert_groups.ts";
import { channelsOf } from "./channels.ts";
import { enqueueFollowers, enqueueMail, enqueuePosts } from "./outbox.ts";
import { alertChannels, queueAlert, type QueuedAlert, sendInOrder } from "../service/looks.ts";

/** A member's last alert: its state is off when that is off, else back. */
const lastOf = (m: Member) => m.said[m.said.length - 1];

/** The members whose alerts waited (those sent at once are not sent again). */
const waited = (g: AlertGroup) => g.members.filter((m) => m.said.length > 0);

/** One line per service whose alerts waited: its name, its alerts, its last status. */
export function groupLines(g: AlertGroup) {
  return waited(g).map((m) => {
    const last = lastOf(m);
    return {
      id: m.id,
      name: m.as.name,
      kind: m.as.kind,
      state: last.event,
      events: m.said.map((a) => ({ event: a.event, at: a.at })),
      status: last.text,
    };
  });
}

/** What the account's mail, posts and followers' mail of a group of several say. */
async function queueGroup(
  deps: Deps,
  op: Atomic,
  acc: Account | null,
  g: AlertGroup,
  now: number,
): Promise<QueuedAlert> {
  const lines = groupLines(g);
  const link = `${deps.config.baseUrl}/me/services`;
  // The services whose off went at once: the waited offs follow them ("2 more services off").
  const first = g.members.filter((m) => m.sent === "off" && !m.said.length).map((m) => m.as.name);
  const mail = groupAlertMail(g.label, g.total, lines, link, first);
  const ids = [...new Set(g.members.flatMap((m) => m.as.channels ?? []))];
  const chans = await channelsOf(deps.kv, g.account, ids);
  const anyOff = lines.some((l) => l.state === "off");
  const thread = lines.map((l) => l.id);
  const posts = enqueuePosts(
    op,
    chans,
    {
      event: anyOff ? "off" : "back",
      title: mail.subject,
      text: lines.map((l) => `${l.name}: ${l.state} (${l.status})`).join("\n"),
      service: null,
      services: lines.map((l) => ({
        id: l.id,
        name: l.name,
        kind: l.kind,
        // A service's state in the API's words (ok, warn, off, wait): a back is ok again.
        state: l.state === "off" ? "off" : "ok",
        status: l.status,
      })),
      group: { name: g.label, total: g.total },
      at: iso(g.opened),
      link,
    },
    now,
    thread,
  );
  const followers = enqueueFollowers(op, g.account, {
    kind: "group",
    label: g.label,
    services: lines.map((l) => ({ service: l.id, name: l.name, state: l.state })),
  }, now);
  return [
    ...acc ? [enqueueMail(op, { ...mail, to: acc.email }, now, thread)] : [],
    ...posts,
    followers,
  ];
}

/** Sends one taken group; answers the alerts it queued. */
async function sendGroup(
  deps: Deps,
  op: Atomic,
  g: AlertGroup,
  now: number,
): Promise<QueuedAlert[]> {
  const acc = (await getAccount(deps.kv, g.account)).value;
  const members = waited(g);
  if (members.length > 1) return [await queueGroup(deps, op, acc, g, now)];
  const m = members[0];
  if (!m) return [];
  const chans = await alertChannels(deps, m.as, true);
  return m.said.map((a) =>
    queueAlert(deps, op, acc, chans, { ...a, as: { ...m.as, seen: a.seen } }, now)
  );
}

/** The runner's pass: sends every group due now, earliest first; answers how many. */
export async function sendDueGroups(deps: Deps): Promise<number> {
  let sent = 0;
  for (const due of await listDueGroups(deps.kv, deps.clock.now())) {
    const now = deps.clock.now();
    const sends = await takeGroup(deps.kv, due, (op, g) => sendGroup(deps, op, g, now));
    if (!sends) continue;
    sent++;
    await sendInOrder(deps, sends);
  }
  return sent;
}
