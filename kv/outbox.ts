import { DAY, MINUTE } from "../lib/clock.ts";
import { randomToken } from "../lib/crypto.ts";
import type { Deps } from "../lib/deps.ts";
import { log } from "../lib/log.ts";
import { type Mail, relayReason } from "../lib/mail.ts";
import { count } from "../lib/metrics.ts";
import { type Atomic, atomic, commit } from "./_atomic.ts";
import { getManyEntries } from "./_batch.ts";

/**
 * Outgoing mail, kept until delivered so none is lost when the transport is down. Key layout:
 *   ["outbox", id] -> QueuedMail   (id sorts by time, then by the order of queueing within one
 *                                   process; expireIn drops mail too old to matter)
 * A mail is enqueued in the same atomic as the change it reports (a link is never stored
 * without its mail, nor mailed without being stored), then delivered right after commit;
 * the minutely job retries what failed, with backoff. Delivery is at least once: a process
 * that dies between the relay's acceptance and the delete sends it again, with the same
 * Message-ID (the id), so mail clients drop the copy. An alert's mail names its services
 * (`thread`): it waits while an earlier mail of one of them to the same address is queued,
 * so a service's alerts reach each address in the order they were decided.
 */

export interface QueuedMail extends Mail {
  id: string;
  created: number;
  attempts: number;
  /** Not before this time: backoff after a failure, or a claim while a send is under way. */
  next: number;
  /** The services an alert's mail is about: it goes after their earlier mails to `to`. */
  thread?: number[];
}

const MAX_AGE = 8 * DAY;
/**
 * How long a send under way keeps its mail from other senders: past it, a process that died
 * mid-send has its mail sent again (jobs/mod.ts RESUME_AFTER_MS looks right after it).
 */
export const CLAIM_MS = 40_000;
const SEND_WAIT = 8_000;

/**
 * Order of queueing within one millisecond of this process: two deliveries of one change (a
 * service's "off" and "back" in one run) keep their order in the ids, which delivery follows.
 */
let queueOrder = 0;

/** A queued delivery's id (mail, channel post): sorts by time, then by order of queueing. */
export function deliveryId(now: number): string {
  queueOrder = (queueOrder + 1) % 36 ** 4;
  const seq = queueOrder.toString(36).padStart(4, "0");
  return `${now.toString(36).padStart(9, "0")}-${seq}${randomToken(9)}`;
}

/**
 * Whether `d` must wait: an earlier delivery to the same place (`samePlace`) about one of its
 * services is still queued (unsent, failed and waiting, or being sent). One ordered queue per
 * service and receiver: a back never overtakes its off, even across a crash or a retry.
 */
export function waitsBehind<T extends { id: string; thread?: number[] }>(
  queued: Iterable<T>,
  d: T,
  samePlace: (q: T) => boolean,
): boolean {
  for (const q of queued) if (q.id < d.id && samePlace(q) && shareService(q, d)) return true;
  return false;
}

/** Whether two deliveries are about one service (alerts name theirs in `thread`). */
function shareService(a: { thread?: number[] }, b: { thread?: number[] }): boolean {
  return !!a.thread?.some((t) => b.thread?.includes(t));
}

/**
 * The delivery next in line after `sent` (just delivered): the earliest one due to the same place
 * about one of its services. A back queued while its off was being sent waited behind it; handed
 * on now, it follows the off at once instead of at the next minutely run.
 */
export function nextInLine<T extends { id: string; thread?: number[]; next: number }>(
  queued: Iterable<T>,
  sent: T,
  samePlace: (q: T) => boolean,
  now: number,
): T | undefined {
  let first: T | undefined;
  for (const q of queued) {
    if (q.id <= sent.id || q.next > now || !samePlace(q) || !shareService(q, sent)) continue;
    if (!first || q.id < first.id) first = q;
  }
  return first;
}

/**
 * Adds a mail to the caller's atomic; answers its id for `deliver` after the commit. An
 * alert's mail names its services in `thread`.
 */
export function enqueueMail(op: Atomic, mail: Mail, now: number, thread?: number[]): string {
  const id = deliveryId(now);
  const queued: QueuedMail = { ...mail, id, created: now, attempts: 0, next: now };
  if (thread?.length) queued.thread = thread;
  op.set(["outbox", id], queued, { expireIn: MAX_AGE });
  return id;
}

/** Every queued mail (for the order of an alert's mail: the outbox is small, mail leaves). */
async function queuedMails(kv: Deno.Kv): Promise<QueuedMail[]> {
  const out: QueuedMail[] = [];
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] })) out.push(e.value);
  return out;
}

/** Queues and delivers one mail that belongs to no other change. */
export async function sendMail(deps: Deps, mail: Mail): Promise<void> {
  const op = atomic(deps.kv);
  const id = enqueueMail(op, mail, deps.clock.now());
  await commit(op);
  await deliver(deps, [id]);
}

/**
 * Tries to deliver queued mails now. Waits a bounded time, so a slow relay cannot hold a
 * request: what is not sent by then stays claimed and the retry job takes it later.
 */
export async function deliver(deps: Deps, ids: string[]): Promise<Delivered> {
  const tally: Delivered = { sent: 0, failed: 0, retried: 0 };
  const sends = [...(await byRecipient(deps.kv, ids)).values()].map(async (inOrder) => {
    for (const id of inOrder) await deliverOne(deps, id, tally);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const wait = new Promise<void>((r) => timer = setTimeout(r, SEND_WAIT));
  await Promise.race([Promise.allSettled(sends), wait]);
  clearTimeout(timer);
  return tally;
}

/**
 * The ids grouped by recipient, each group oldest first: one person's mails go out one after
 * the other in the order they were queued (an "off" never arrives after its "back"), while
 * different people's go out side by side.
 */
async function byRecipient(kv: Deno.Kv, ids: string[]): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  if (ids.length === 1) return groups.set("", ids);
  const sorted = [...ids].sort();
  const entries = await getManyEntries<QueuedMail>(kv, sorted.map((id) => ["outbox", id]));
  entries.forEach((e, i) => {
    const to = e.value?.to ?? "";
    groups.set(to, [...groups.get(to) ?? [], sorted[i]]);
  });
  return groups;
}

/** Outcomes of delivery attempts: `retried` counts the sent ones that had failed before. */
export interface Delivered {
  sent: number;
  failed: number;
  retried: number;
}

async function deliverOne(deps: Deps, id: string, tally: Delivered): Promise<boolean> {
  const { kv, clock, mailer } = deps;
  const entry = await kv.get<QueuedMail>(["outbox", id]);
  const mail = entry.value;
  if (!mail || mail.next > clock.now()) return false;
  // Behind an earlier alert of its service: sent after it (this pass or the retry job's).
  if (mail.thread && waitsBehind(await queuedMails(kv), mail, (q) => q.to === mail.to)) {
    return false;
  }
  // Claim it, so the retry job and this request never both send it.
  const claimed: QueuedMail = { ...mail, next: clock.now() + CLAIM_MS };
  const got = await commit(atomic(kv).check(entry).set(entry.key, claimed, { expireIn: MAX_AGE }));
  if (!got.ok) return false;
  try {
    await mailer.send({ to: mail.to, subject: mail.subject, text: mail.text, id: mail.id });
    await commit(atomic(kv).delete(entry.key));
    tally.sent++;
    count("catalogue_mail_total", 'outcome="sent"');
    if (mail.attempts > 0) {
      tally.retried++;
      log("info", "mail sent after retry", { mail: id, attempt: mail.attempts + 1 });
    }
  } catch (err) {
    await failed(deps, { key: entry.key, versionstamp: got.versionstamp }, mail, err, tally);
    return false;
  }
  if (mail.thread) {
    const queued = await queuedMails(kv);
    const next = nextInLine(queued, mail, (q) => q.to === mail.to, clock.now());
    if (next) await deliverOne(deps, next.id, tally);
  }
  return true;
}

/** A send that failed: the mail waits for its next attempt, later each time. */
async function failed(
  deps: Deps,
  claimed: { key: Deno.KvKey; versionstamp: string },
  mail: QueuedMail,
  err: unknown,
  tally: Delivered,
): Promise<void> {
  const attempts = mail.attempts + 1;
  const backoff = Math.min(2 ** attempts * MINUTE, 6 * 60 * MINUTE);
  tally.failed++;
  count("catalogue_mail_total", 'outcome="failed"');
  // The relay's reason, addresses cut out; the address and the text stay out of the logs.
  log("warn", "mail delivery failed", {
    mail: mail.id,
    attempt: attempts,
    reason: relayReason(err),
    retry_in_s: backoff / 1000,
  });
  // Only over this claim: a mail dropped meanwhile (an unfollow, an erasure) stays dropped.
  const next = { ...mail, attempts, next: deps.clock.now() + backoff };
  await commit(
    atomic(deps.kv).check(claimed).set(claimed.key, next, { expireIn: MAX_AGE }),
  );
}

/** Job: delivers every queued mail that is due; answers what became of them. */
export async function retryOutbox(deps: Deps): Promise<Delivered & { due: number }> {
  const due: string[] = [];
  const now = deps.clock.now();
  for await (const e of deps.kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (e.value.next <= now) due.push(e.value.id);
  }
  const out = { due: due.length, sent: 0, failed: 0, retried: 0 };
  for (let i = 0; i < due.length; i += 10) {
    const d = await deliver(deps, due.slice(i, i + 10));
    out.sent += d.sent;
    out.failed += d.failed;
    out.retried += d.retried;
  }
  return out;
}

/** The queue as /metrics shows it: how many mails wait, and since when the oldest. */
export async function outboxStats(
  kv: Deno.Kv,
  now: number,
): Promise<{ depth: number; oldestSeconds: number }> {
  let depth = 0;
  let oldest = now;
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] }, { batchSize: 500 })) {
    depth++;
    if (e.value.created < oldest) oldest = e.value.created;
  }
  return { depth, oldestSeconds: Math.max(0, Math.round((now - oldest) / 1000)) };
}

/** Mail to an address, or naming it (a team notice about its request, say). */
const about = (m: QueuedMail, email: string) =>
  m.to === email || m.subject.includes(email) || m.text.includes(email);

/** Mail still queued to or about an address, oldest first (data export). */
export async function queuedAbout(kv: Deno.Kv, email: string): Promise<QueuedMail[]> {
  const out: QueuedMail[] = [];
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (about(e.value, email)) out.push(e.value);
  }
  return out;
}

/** Removes queued mail to or about an address (erasure): none is sent after it. */
export async function dropMailAbout(kv: Deno.Kv, email: string): Promise<void> {
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (about(e.value, email)) await commit(atomic(kv).delete(e.key));
  }
}

/** Removes queued mail to an address whose text holds `mark` (a followed page's erasure). */
export async function dropMailTo(kv: Deno.Kv, email: string, mark: string): Promise<void> {
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (e.value.to === email && e.value.text.includes(mark)) await commit(atomic(kv).delete(e.key));
  }
}
