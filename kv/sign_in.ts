import type { Deps } from "../lib/deps.ts";
import { gone } from "../lib/errors.ts";
import { type LinkMail, newSignInMail, validity } from "../mail/sign_in.ts";
import { atomic, transact } from "./_atomic.ts";
import { type Account, findAccountByEmail, prepareAccount } from "./accounts.ts";
import { findLink, type Link, LINK_LIFE, prepareLink } from "./links.ts";
import { deliver, enqueueMail } from "./outbox.ts";
import { prepareSession, type Session } from "./sessions.ts";
import { trailAppend } from "./trail.ts";

/** The page a mailed link opens (CONTRACT.md: `{BASE_URL}/me?verify=<token>`). */
export const linkUrl = (baseUrl: string, token: string) =>
  `${baseUrl}/me?verify=${encodeURIComponent(token)}`;

/**
 * Stores a link and queues its mail in one atomic, then delivers the mail. `compose` gets the
 * link address and the validity text and writes the mail.
 */
export async function issueLink(
  deps: Deps,
  input: Omit<Link, "created" | "expires">,
  compose: LinkMail,
): Promise<void> {
  const now = deps.clock.now();
  const mailId = await transact(async () => {
    const link = await prepareLink(deps.kv, input, now);
    const op = link.apply(atomic(deps.kv));
    const mail = compose(
      linkUrl(deps.config.baseUrl, link.token),
      validity(LINK_LIFE[input.purpose]),
    );
    const id = enqueueMail(op, { ...mail, to: input.email }, now);
    return { op, result: id };
  });
  await deliver(deps, [mailId]);
}

export interface SignedIn {
  account: Account;
  created: boolean;
  token: string;
  session: Session;
  link: Link;
}

/**
 * Completes a mailed link: consumes it, creates the account on first sign-in, opens a
 * session. One atomic with a check on the link, so two opens of one link never both win.
 */
export async function completeLink(
  deps: Deps,
  token: string,
  origin: { address: string; agent: string },
): Promise<SignedIn> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { result, mailIds } = await transact(async () => {
    const found = await findLink(kv, token, now);
    if (!found) gone("this link is used, expired or unknown: request a new one");
    const link = found.entry.value;
    const op = found.consume(atomic(kv));
    const existing = await findAccountByEmail(kv, link.email);
    let account: Account;
    const mailIds: string[] = [];
    if (existing) {
      account = existing.value;
      op.check(existing);
      const notice = newSignInMail(
        now,
        origin.address,
        origin.agent,
        `${deps.config.baseUrl}/me/devices`,
      );
      mailIds.push(enqueueMail(op, { ...notice, to: account.email }, now));
    } else {
      const fresh = await prepareAccount(kv, link.email, link.name ?? "", now);
      fresh.apply(op);
      account = fresh.account;
      const trail = await trailAppend(kv, [{
        actor: `account:${account.id}`,
        action: "account.create",
        subject: `account:${account.id}`,
      }], now);
      trail.apply(op);
    }
    const session = await prepareSession(kv, account.id, now);
    session.apply(op);
    return {
      op,
      result: {
        result: {
          account,
          created: !existing,
          token: session.token,
          session: session.session,
          link,
        },
        mailIds,
      },
    };
  });
  await deliver(deps, mailIds);
  return result;
}
