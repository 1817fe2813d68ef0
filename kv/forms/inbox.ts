import type { Deps } from "../../lib/deps.ts";
import { type Mail, printedMail } from "../../lib/mail.ts";
import { deliver, enqueueMail } from "../alerts/outbox.ts";
import { type Atomic } from "../_atomic.ts";

/**
 * Mail to the team mailboxes (TEAM_INBOX, REPORT_INBOX). A configured mailbox gets the mail
 * through the outbox, in the atomic of the change it reports; an unset one means the mail
 * is printed to standard output after the commit (docs/api.md, "Requests"), so nothing is lost on a
 * machine without mailboxes. Holds no KV keys of its own.
 */

export interface QueuedInboxMails {
  ids: string[];
  printed: Mail[];
}

export const queuedInboxMails = (): QueuedInboxMails => ({ ids: [], printed: [] });

/** Queues `mail` for `inbox` in `op`, or keeps it to print when the inbox is unset. */
export function mailInbox(
  op: Atomic,
  p: QueuedInboxMails,
  inbox: string | undefined,
  mail: Omit<Mail, "to">,
  now: number,
): void {
  if (inbox) p.ids.push(enqueueMail(op, { ...mail, to: inbox }, now));
  else p.printed.push({ ...mail, to: "(mailbox not configured)" });
}

/** Queues a mail to a person (the submitter, the sender of a request). */
export function mailTo(op: Atomic, p: QueuedInboxMails, mail: Mail, now: number): void {
  p.ids.push(enqueueMail(op, mail, now));
}

/** After the commit: delivers the queued mails and prints the ones for unset mailboxes. */
export async function flush(deps: Deps, p: QueuedInboxMails): Promise<void> {
  for (const m of p.printed) deps.print(printedMail(m));
  if (p.ids.length) await deliver(deps, p.ids);
}
