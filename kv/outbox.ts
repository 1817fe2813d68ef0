import { DAY, MINUTE } from "../lib/clock.ts";
import { randomToken } from "../lib/crypto.ts";
import type { Deps } from "../lib/deps.ts";
import type { Mail } from "../lib/mail.ts";

/**
 * Outgoing mail, kept until delivered so none is lost when the transport is down. Key layout:
 *   ["outbox", id] -> QueuedMail   (id sorts by time; expireIn drops mail too old to matter)
 * A mail is enqueued in the same atomic as the change it reports (a link is never stored
 * without its mail, nor mailed without being stored), then delivered right after commit;
 * the minutely job retries what failed, with backoff.
 */

export interface QueuedMail extends Mail {
  id: string;
  created: number;
  attempts: number;
  /** Not before this time: backoff after a failure, or a claim while a send is under way. */
  next: number;
}

const MAX_AGE = 8 * DAY;
const CLAIM = 2 * MINUTE;
const SEND_WAIT = 8_000;

/** Adds a mail to the caller's atomic; answers its id for `deliver` after the commit. */
export function enqueueMail(op: Deno.AtomicOperation, mail: Mail, now: number): string {
  const id = `${now.toString(36).padStart(9, "0")}-${randomToken(9)}`;
  const queued: QueuedMail = { ...mail, id, created: now, attempts: 0, next: now };
  op.set(["outbox", id], queued, { expireIn: MAX_AGE });
  return id;
}

/** Queues and delivers one mail that belongs to no other change. */
export async function sendMail(deps: Deps, mail: Mail): Promise<void> {
  const op = deps.kv.atomic();
  const id = enqueueMail(op, mail, deps.clock.now());
  await op.commit();
  await deliver(deps, [id]);
}

/**
 * Tries to deliver queued mails now. Waits a bounded time, so a slow relay cannot hold a
 * request: what is not sent by then stays claimed and the retry job takes it later.
 */
export async function deliver(deps: Deps, ids: string[]): Promise<void> {
  const sends = ids.map((id) => deliverOne(deps, id));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const wait = new Promise<void>((r) => timer = setTimeout(r, SEND_WAIT));
  await Promise.race([Promise.allSettled(sends), wait]);
  clearTimeout(timer);
}

async function deliverOne(deps: Deps, id: string): Promise<boolean> {
  const { kv, clock, mailer } = deps;
  const entry = await kv.get<QueuedMail>(["outbox", id]);
  const mail = entry.value;
  if (!mail || mail.next > clock.now()) return false;
  // Claim it, so the retry job and this request never both send it.
  const claimed: QueuedMail = { ...mail, next: clock.now() + CLAIM };
  const got = await kv.atomic().check(entry).set(entry.key, claimed, { expireIn: MAX_AGE })
    .commit();
  if (!got.ok) return false;
  try {
    await mailer.send({ to: mail.to, subject: mail.subject, text: mail.text });
    await kv.delete(entry.key);
    return true;
  } catch (err) {
    const attempts = mail.attempts + 1;
    const backoff = Math.min(2 ** attempts * MINUTE, 6 * 60 * MINUTE);
    // The reason only: the address and the text stay out of the logs.
    console.error(`mail ${id}: delivery attempt ${attempts} failed: ${errorCode(err)}`);
    await kv.set(entry.key, { ...mail, attempts, next: clock.now() + backoff }, {
      expireIn: MAX_AGE,
    });
    return false;
  }
}

function errorCode(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { code?: unknown; responseCode?: unknown; message?: unknown };
    if (e.responseCode) return `SMTP ${e.responseCode}`;
    if (typeof e.code === "string") return e.code;
  }
  return err instanceof Error ? err.name : "error";
}

/** Job: delivers every queued mail that is due. */
export async function retryOutbox(deps: Deps): Promise<number> {
  const due: string[] = [];
  const now = deps.clock.now();
  for await (const e of deps.kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (e.value.next <= now) due.push(e.value.id);
  }
  for (let i = 0; i < due.length; i += 10) await deliver(deps, due.slice(i, i + 10));
  return due.length;
}

/** Mail still queued for an address, oldest first (data export). */
export async function queuedTo(kv: Deno.Kv, email: string): Promise<QueuedMail[]> {
  const out: QueuedMail[] = [];
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (e.value.to === email) out.push(e.value);
  }
  return out;
}

/** Removes queued mail to an address (erasure). */
export async function dropMailTo(kv: Deno.Kv, email: string): Promise<void> {
  for await (const e of kv.list<QueuedMail>({ prefix: ["outbox"] })) {
    if (e.value.to === email) await kv.delete(e.key);
  }
}
