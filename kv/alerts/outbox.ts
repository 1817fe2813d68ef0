/**
 * The outbox: every delivery the server makes, one kind of record in one queue. A delivery is
 * a mail (to the account, to a follower, a sign-in link, a notice), a post to one channel, or
 * the mail of a status page's followers still to be written (one record, turned into one mail
 * per follower a batch per atomic, since a page may have more followers than one atomic holds).
 * Key layout:
 *   ["outbox", id] -> Delivery {kind: "mail" | "post" | "followers", id, created, attempts,
 *                     next, thread?, ...what it carries}; id sorts by time, then by the order
 *                     of queueing within one process; expires after 8 days
 * The prefixes of the queues this one replaced, ["channel_outbox", id] (posts) and
 * ["follow_fanout", id] (followers' mail), are read only by the migration that moves what they
 * still hold in here (`moveOldQueues`).
 *
 * Invariants:
 * - A delivery is enqueued in the atomic of the change it reports (an alert in the look that
 *   decided it, a link with its record), never before, never without it.
 * - This module alone claims, sends, retries and orders deliveries: `deliver` right after the
 *   commit, `deliverDue` (the minutely outbox job, and the job a restart runs) for what failed
 *   or what a dead process had claimed. A claim (CLAIM_MS) keeps a delivery from other senders
 *   while it is sent; delivery is at least once, and every attempt carries the same identity,
 *   the delivery's id (mail `Message-ID`, a post's `X-Webhook-Id`), so a copy after a crash is
 *   known for one.
 * - One rule orders alerts (`waitsBehind`): a delivery that names services (`thread`) waits
 *   while an earlier one about one of them to the same receiver (an address, a channel, a
 *   page's followers) is queued, unsent, failed or being sent; when one is sent the next in
 *   line goes at once (`nextInLine`). So a back never overtakes its off anywhere.
 * - Retries back off (2, 4, 8 ... minutes, at most 6 hours). A post honours a provider's
 *   Retry-After and is given up after MAX_ATTEMPTS tries (its channel marked broken and its
 *   owner mailed, once, kv/alerts/channels.ts `outcomeOf`); mail is tried until it expires.
 */
import { DAY, iso, MINUTE } from "../../lib/clock.ts";
import { randomToken } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { log } from "../../lib/log.ts";
import { type Mail, relayReason } from "../../lib/mail.ts";
import { count } from "../../lib/metrics.ts";
import { type Atomic, atomic, commit } from "../_atomic.ts";
import { getManyEntries } from "../_batch.ts";
import { getAccount, isOwner } from "../accounts/accounts.ts";
import type { AlertPayload, Channel, SendResult } from "./channels.ts";
import { payloadJson } from "../../lib/channels/webhook.ts";
import type { FollowEvent } from "../status/followers.ts";
import { after, type Timer } from "../../lib/timers.ts";

/**
 * The channel kinds and the followers' list load with the first post or followers' record this
 * process delivers: one that only queues and sends mail (a sign-in link, a form's receipt)
 * needs neither, and they are most of the delivery path's code.
 */
const channels = () => import("./channels.ts");
type ChannelKinds = Awaited<ReturnType<typeof channels>>;
const followers = () => import("../status/followers.ts");

interface Queued {
  id: string;
  created: number;
  attempts: number;
  /** Not before this time: backoff after a failure, or a claim while a send is under way. */
  next: number;
  /** The services an alert is about: it goes after their earlier deliveries to its receiver. */
  thread?: number[];
}

/** A mail (records from before kinds have no `kind`: they are mail). */
export interface QueuedMail extends Queued, Omit<Mail, "id"> {
  kind: "mail";
}

/** An alert to one channel, as the generic webhook's JSON, formatted for its kind when sent. */
export interface QueuedPost extends Queued {
  kind: "post";
  account: number;
  channel: number;
  body: string;
  event: string;
}

/** What a page's followers are told; `cursor`: the last follower mailed (null before any). */
export interface QueuedFollowers extends Queued {
  kind: "followers";
  account: number;
  event: FollowEvent;
  at: number;
  cursor: string | null;
}

export type Delivery = QueuedMail | QueuedPost | QueuedFollowers;

const MAX_AGE = 8 * DAY;
/**
 * How long a send under way keeps its delivery from other senders: past it, a process that
 * died mid-send has it sent again (jobs/mod.ts RESUME_AFTER_MS looks right after it).
 */
export const CLAIM_MS = 40_000;
/** How long a request waits for its deliveries; the rest go on after it answers. */
const SEND_WAIT = 8_000;

const deliveryKey = (id: string) => ["outbox", id] as const;

/** A record as stored: mail from before kinds reads as mail. */
const read = (v: Delivery): Delivery => v.kind ? v : { ...(v as QueuedMail), kind: "mail" };

/** Who a delivery goes to: an address, a channel, or a page's followers. */
export const receiverOf = (d: Delivery): string =>
  d.kind === "post"
    ? `channel:${d.account}/${d.channel}`
    : d.kind === "followers"
    ? `followers:${d.account}`
    : `mail:${d.to}`;

/**
 * Order of queueing within one millisecond of this process: two deliveries of one change (a
 * service's "off" and "back" in one run) keep their order in the ids, which delivery follows.
 */
let queueOrder = 0;

function deliveryId(now: number): string {
  queueOrder = (queueOrder + 1) % 36 ** 4;
  const seq = queueOrder.toString(36).padStart(4, "0");
  return `${now.toString(36).padStart(9, "0")}-${seq}${randomToken(9)}`;
}

function put(op: Atomic, d: Delivery): string {
  if (!d.thread?.length) delete d.thread;
  op.set(deliveryKey(d.id), d, { expireIn: MAX_AGE });
  return d.id;
}

const fresh = (now: number, thread?: number[]): Queued => ({
  id: deliveryId(now),
  created: now,
  attempts: 0,
  next: now,
  ...(thread?.length ? { thread } : {}),
});

/**
 * Adds a mail to the caller's atomic; answers its id for `deliver` after the commit. An
 * alert's mail names its services in `thread`.
 */
export function enqueueMail(op: Atomic, mail: Mail, now: number, thread?: number[]): string {
  return put(op, { ...mail, ...fresh(now, thread), kind: "mail" });
}

/** Adds one post per channel to the caller's atomic; answers their ids. */
export function enqueuePosts(
  op: Atomic,
  channels: Channel[],
  payload: AlertPayload,
  now: number,
  thread?: number[],
): string[] {
  const body = payloadJson(payload);
  return channels.map((c) =>
    put(op, {
      ...fresh(now, thread),
      kind: "post",
      account: c.account,
      channel: c.id,
      body,
      event: payload.event,
    })
  );
}

/** The services a followers' mail is about (a note or an incident names none to wait for). */
const threadOf = (e: FollowEvent) =>
  e.kind === "service" ? [e.service] : e.kind === "group" ? e.services.map((s) => s.service) : [];

/** Adds the mail of the account's page followers about `event` to the caller's atomic. */
export function enqueueFollowers(
  op: Atomic,
  account: number,
  event: FollowEvent,
  now: number,
): string {
  return put(op, {
    ...fresh(now, threadOf(event)),
    kind: "followers",
    account,
    event,
    at: now,
    cursor: null,
  });
}

/**
 * Whether `d` must wait: an earlier delivery to the same receiver about one of its services is
 * still queued (unsent, failed and waiting, or being sent). One ordered line per service and
 * receiver: a back never overtakes its off, even across a crash or a retry.
 */
export function waitsBehind(queued: Iterable<Delivery>, d: Delivery): boolean {
  const to = receiverOf(d);
  for (const q of queued) {
    if (q.id < d.id && receiverOf(q) === to && shareService(q, d)) return true;
  }
  return false;
}

/**
 * The delivery next in line after `sent` (just delivered): the earliest one due to the same
 * receiver about one of its services, which waited behind it and follows it now.
 */
export function nextInLine(queued: Iterable<Delivery>, sent: Delivery, now: number) {
  const to = receiverOf(sent);
  let first: Delivery | undefined;
  for (const q of queued) {
    if (q.id <= sent.id || q.next > now || receiverOf(q) !== to || !shareService(q, sent)) continue;
    if (!first || q.id < first.id) first = q;
  }
  return first;
}

/** Whether two deliveries are about one service (alerts name theirs in `thread`). */
function shareService(a: Delivery, b: Delivery): boolean {
  return !!a.thread?.some((t) => b.thread?.includes(t));
}

/** Every queued delivery, read alike. */
async function* queuedAll(kv: Deno.Kv): AsyncGenerator<Deno.KvEntry<Delivery>> {
  for await (const e of kv.list<Delivery>({ prefix: ["outbox"] }, { batchSize: 500 })) {
    yield { ...e, value: read(e.value) };
  }
}

/** Every queued delivery (for an alert's order: the outbox is small, deliveries leave). */
async function queued(kv: Deno.Kv): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for await (const e of queuedAll(kv)) out.push(e.value);
  return out;
}

/** Queues and delivers one mail that belongs to no other change. */
export async function sendMail(deps: Deps, mail: Mail): Promise<void> {
  const op = atomic(deps.kv);
  const id = enqueueMail(op, mail, deps.clock.now());
  await commit(op);
  await deliver(deps, [id]);
}

/** Outcomes of delivery attempts: `retried` counts the sent ones that had failed before. */
export interface Delivered {
  sent: number;
  failed: number;
  retried: number;
}

/**
 * Tries to deliver queued deliveries now: each receiver's one after the other in the order
 * they were queued (an off never arrives after its back), receivers side by side. Waits a
 * bounded time, so a slow relay or receiver cannot hold a request: what is not sent by then
 * goes on, claimed, after the answer.
 */
export async function deliver(deps: Deps, ids: string[]): Promise<Delivered> {
  const tally: Delivered = { sent: 0, failed: 0, retried: 0 };
  if (!ids.length) return tally;
  const sends = [...(await byReceiver(deps.kv, ids)).values()].map(async (inOrder) => {
    for (const id of inOrder) await deliverOne(deps, id, tally);
  });
  let timer: Timer | undefined;
  const wait = new Promise<void>((r) => timer = after(SEND_WAIT, r));
  await Promise.race([Promise.allSettled(sends), wait]);
  timer?.cancel();
  return tally;
}

/** The ids grouped by receiver, each group oldest first. */
async function byReceiver(kv: Deno.Kv, ids: string[]): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  if (ids.length === 1) return groups.set("", ids);
  const sorted = [...new Set(ids)].sort();
  const entries = await getManyEntries<Delivery>(kv, sorted.map(deliveryKey));
  entries.forEach((e, i) => {
    const to = e.value ? receiverOf(read(e.value)) : "";
    groups.set(to, [...groups.get(to) ?? [], sorted[i]]);
  });
  return groups;
}

/** What a send came to: done (sent, or nothing left to send), or a retry after `wait` ms. */
type Outcome =
  | { done: true; sent: boolean; said?: SendResult }
  | { done: false; wait: number; giveUp: boolean; said?: SendResult };

const backoff = (attempts: number) => Math.min(2 ** attempts * MINUTE, 6 * 60 * MINUTE);

/** One delivery: claimed, sent, then deleted or set for its retry; answers how it went. */
async function deliverOne(deps: Deps, id: string, tally: Delivered): Promise<SendResult> {
  const { kv, clock } = deps;
  const entry = await kv.get<Delivery>(deliveryKey(id));
  if (!entry.value) return { ok: false, status: "not queued" };
  const d = read(entry.value);
  if (d.next > clock.now()) return { ok: false, status: "not due" };
  // Behind an earlier alert of its service to the same receiver: sent after it.
  if (d.thread && waitsBehind(await queued(kv), d)) {
    return { ok: false, status: "waits for an earlier alert" };
  }
  // Claim it, so another sender (a retry, another process) never sends it meanwhile.
  const claimed = { ...d, next: clock.now() + CLAIM_MS };
  const got = await commit(atomic(kv).check(entry).set(entry.key, claimed, { expireIn: MAX_AGE }));
  if (!got.ok) return { ok: false, status: "claimed elsewhere" };
  const held = { key: entry.key, versionstamp: got.versionstamp };
  const outcome = d.kind === "mail"
    ? await sendMailOf(deps, d)
    : d.kind === "post"
    ? await sendPostOf(deps, d)
    : await writeFollowers(deps, claimed as QueuedFollowers, held);
  if (!outcome.done) {
    tally.failed++;
    // Only over this claim: a delivery dropped meanwhile (an unfollow, an erasure) stays dropped.
    const op = atomic(kv).check(held);
    if (outcome.giveUp) op.delete(entry.key);
    else {
      const next = { ...d, attempts: d.attempts + 1, next: clock.now() + outcome.wait };
      op.set(entry.key, next, { expireIn: MAX_AGE });
    }
    await commit(op);
    return outcome.said ?? { ok: false, status: "failed" };
  }
  // A followers' record leaves with its last batch; what else is done leaves now.
  if (d.kind !== "followers") await commit(atomic(kv).delete(entry.key));
  if (outcome.sent) {
    tally.sent++;
    if (d.attempts > 0) tally.retried++;
  }
  if (d.thread) {
    const next = nextInLine(await queued(kv), d, clock.now());
    if (next) await deliverOne(deps, next.id, tally);
  }
  return outcome.said ?? { ok: outcome.sent, status: outcome.sent ? "sent" : "nothing to send" };
}

async function sendMailOf(deps: Deps, mail: QueuedMail): Promise<Outcome> {
  try {
    await deps.mailer.send({ to: mail.to, subject: mail.subject, text: mail.text, id: mail.id });
  } catch (err) {
    const attempts = mail.attempts + 1;
    const wait = backoff(attempts);
    count("catalogue_mail_total", 'outcome="failed"');
    // The relay's reason, addresses cut out; the address and the text stay out of the logs.
    log("warn", "mail delivery failed", {
      mail: mail.id,
      attempt: attempts,
      reason: relayReason(err),
      retry_in_s: wait / 1000,
    });
    return { done: false, wait, giveUp: false };
  }
  count("catalogue_mail_total", 'outcome="sent"');
  if (mail.attempts > 0) {
    log("info", "mail sent after retry", { mail: mail.id, attempt: mail.attempts + 1 });
  }
  return { done: true, sent: true };
}

async function sendPostOf(deps: Deps, post: QueuedPost): Promise<Outcome> {
  const { kv } = deps;
  const kinds = await channels();
  const channel = await kinds.getChannel(kv, post.account, post.channel);
  if (!channel) return { done: true, sent: false, said: { ok: false, status: "channel removed" } };
  const r = await postNow(deps, kinds, channel, post);
  const attempts = post.attempts + 1;
  if (!r.ok) {
    // The reason only: no address, no token in the logs.
    log("warn", "channel delivery failed", {
      post: post.id,
      kind: kinds.channelKindOf(channel).kind,
      attempt: attempts,
      // The words and the status only: what a receiver said may name anything.
      reason: r.status.replace(/ \(HTTP (\d+)[^)]*\)+/, " (HTTP $1)"),
    });
  }
  const giveUp = !r.ok && attempts >= kinds.MAX_ATTEMPTS;
  if (!r.ok || channel.failure || channel.broken) {
    // A test is retried like an alert, but never marks the channel broken.
    await noteOutcome(deps, kinds, channel, r, giveUp && post.event !== "test" ? attempts : null);
  }
  if (r.ok) return { done: true, sent: true, said: r };
  return { done: false, wait: Math.max(backoff(attempts), r.retryAfter ?? 0), giveUp, said: r };
}

/** One post sent now: a private target only for an owner's channel. */
async function postNow(
  deps: Deps,
  kinds: ChannelKinds,
  channel: Channel,
  post: QueuedPost,
): Promise<SendResult> {
  const account = (await getAccount(deps.kv, post.account)).value;
  const owner = account ? isOwner(account) : false;
  return await kinds.sendPost(deps, channel, post.body, post.id, owner);
}

/** The channel's record after a post, with the mail to its owner when it is broken now. */
async function noteOutcome(
  deps: Deps,
  kinds: ChannelKinds,
  channel: Channel,
  r: SendResult,
  givenUp: number | null,
) {
  const now = deps.clock.now();
  const note = await kinds.outcomeOf(deps, channel, r, givenUp);
  if (!note) return;
  const mails = note.mail ? [enqueueMail(note.op, note.mail, now)] : [];
  if ((await commit(note.op)).ok) await deliver(deps, mails);
}

/**
 * Writes a followers' record out: one mail per confirmed follower (kv/status/followers.ts
 * `followerBatch`), a batch per atomic checked against the record, which moves its cursor
 * and stays claimed; the last batch deletes it. Each batch is delivered before the next is
 * written. A record changed under it (dropped by an erasure) ends the run.
 */
async function writeFollowers(
  deps: Deps,
  item: QueuedFollowers,
  held: { key: Deno.KvKey; versionstamp: string },
): Promise<Outcome> {
  const { kv, clock } = deps;
  const { followerBatch } = await followers();
  let current = held;
  let at = item;
  for (;;) {
    const now = clock.now();
    const op = atomic(kv).check(current);
    const batch = await followerBatch(deps, op, at.account, at.event, at.at, at.cursor);
    if (!batch) {
      await commit(op.delete(current.key));
      return { done: true, sent: true };
    }
    const ids = batch.mails.map((m) => enqueueMail(op, m, now, at.thread));
    const next: QueuedFollowers = { ...at, cursor: batch.cursor, next: now + CLAIM_MS };
    const res = await commit(op.set(current.key, next, { expireIn: MAX_AGE }));
    if (!res.ok) return { done: true, sent: false };
    current = { key: current.key, versionstamp: res.versionstamp };
    at = next;
    await deliver(deps, ids);
  }
}

/** Job: delivers every queued delivery that is due; answers what became of them. */
export async function deliverDue(deps: Deps): Promise<Delivered & { due: number }> {
  const due: string[] = [];
  const now = deps.clock.now();
  for await (const e of queuedAll(deps.kv)) if (e.value.next <= now) due.push(e.value.id);
  const out = { due: due.length, sent: 0, failed: 0, retried: 0 };
  for (let i = 0; i < due.length; i += 10) {
    const d = await deliver(deps, due.slice(i, i + 10));
    out.sent += d.sent;
    out.failed += d.failed;
    out.retried += d.retried;
  }
  return out;
}

/** Sends a test alert to one channel now, through the queue; answers how it went. */
export async function testChannel(deps: Deps, channel: Channel): Promise<SendResult> {
  const now = deps.clock.now();
  const op = atomic(deps.kv);
  const [id] = enqueuePosts(op, [channel], {
    event: "test",
    title: `Test alert for channel "${channel.name}"`,
    text: "This is a test alert. Alerts of the services that use this channel come here.",
    service: null,
    at: iso(now),
    link: `${deps.config.baseUrl}/me/channels`,
  }, now);
  await commit(op);
  return await sendNow(deps, id);
}

/** Delivers one queued delivery now and answers what its receiver said (a test waits for it). */
export async function sendNow(deps: Deps, id: string): Promise<SendResult> {
  return await deliverOne(deps, id, { sent: 0, failed: 0, retried: 0 });
}

/** The queue as /metrics shows it: how many deliveries wait, and since when the oldest. */
export async function outboxStats(
  kv: Deno.Kv,
  now: number,
): Promise<{ depth: number; oldestSeconds: number }> {
  let depth = 0;
  let oldest = now;
  for await (const e of queuedAll(kv)) {
    depth++;
    if (e.value.created < oldest) oldest = e.value.created;
  }
  return { depth, oldestSeconds: Math.max(0, Math.round((now - oldest) / 1000)) };
}

/** Mail to an address, or naming it (a team notice about its request, say). */
const about = (m: Delivery, email: string): m is QueuedMail =>
  m.kind === "mail" && (m.to === email || m.subject.includes(email) || m.text.includes(email));

/** Mail still queued to or about an address, oldest first (data export). */
export async function queuedAbout(kv: Deno.Kv, email: string): Promise<QueuedMail[]> {
  const out: QueuedMail[] = [];
  for await (const e of queuedAll(kv)) if (about(e.value, email)) out.push(e.value);
  return out;
}

/** Removes queued mail to or about an address (erasure): none is sent after it. */
export async function dropMailAbout(kv: Deno.Kv, email: string): Promise<void> {
  for await (const e of queuedAll(kv)) {
    if (about(e.value, email)) await commit(atomic(kv).delete(e.key));
  }
}

/** Removes queued mail to an address whose text holds `mark` (a followed page's erasure). */
export async function dropMailTo(kv: Deno.Kv, email: string, mark: string): Promise<void> {
  for await (const e of queuedAll(kv)) {
    const d = e.value;
    if (d.kind === "mail" && d.to === email && d.text.includes(mark)) {
      await commit(atomic(kv).delete(e.key));
    }
  }
}

/** The account's queued posts (export). */
export async function postsOf(kv: Deno.Kv, account: number): Promise<QueuedPost[]> {
  const out: QueuedPost[] = [];
  for await (const e of queuedAll(kv)) {
    if (e.value.kind === "post" && e.value.account === account) out.push(e.value);
  }
  return out;
}

/** Removes the account's queued posts, or its followers' mail still to be written (erasure). */
export async function dropQueuedOf(
  kv: Deno.Kv,
  account: number,
  kind: "post" | "followers",
): Promise<void> {
  for await (const e of queuedAll(kv)) {
    const d = e.value;
    if (d.kind === kind && d.account === account) await commit(atomic(kv).delete(e.key));
  }
}

/**
 * Migration: moves what the queues this one replaced still hold in here, and marks mail from
 * before kinds as mail. Each record moves in one atomic (deleted there, written here, checked
 * against both), keeping its id, so a post keeps its `X-Webhook-Id`. Safe to run again.
 */
export async function moveOldQueues(kv: Deno.Kv): Promise<number> {
  let moved = 0;
  for await (const e of kv.list<Omit<QueuedPost, "kind">>({ prefix: ["channel_outbox"] })) {
    const p = e.value;
    const post: QueuedPost = {
      kind: "post",
      id: p.id,
      created: p.created,
      attempts: p.attempts,
      next: p.next,
      ...(p.thread?.length ? { thread: p.thread } : {}),
      account: p.account,
      channel: p.channel,
      body: p.body,
      event: p.event,
    };
    if (await moveOne(kv, e, post)) moved++;
  }
  const old = kv.list<
    { id: string; account: number; event: FollowEvent; at: number; cursor: string | null }
  >(
    { prefix: ["follow_fanout"] },
  );
  for await (const e of old) {
    const f = e.value;
    const item: QueuedFollowers = {
      kind: "followers",
      id: f.id,
      created: f.at,
      attempts: 0,
      // Due since it was queued: the next send or job takes it.
      next: f.at,
      ...(threadOf(f.event).length ? { thread: threadOf(f.event) } : {}),
      account: f.account,
      event: f.event,
      at: f.at,
      cursor: f.cursor,
    };
    if (await moveOne(kv, e, item)) moved++;
  }
  for await (const e of kv.list<Delivery>({ prefix: ["outbox"] })) {
    if (e.value.kind) continue;
    await commit(atomic(kv).check(e).set(e.key, read(e.value), { expireIn: MAX_AGE }));
  }
  return moved;
}

async function moveOne(kv: Deno.Kv, from: Deno.KvEntry<unknown>, to: Delivery): Promise<boolean> {
  const there = await kv.get(deliveryKey(to.id));
  const op = atomic(kv).check(from, there).delete(from.key);
  if (!there.value) op.set(deliveryKey(to.id), to, { expireIn: MAX_AGE });
  return (await commit(op)).ok;
}
