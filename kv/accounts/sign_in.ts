import type { Deps } from "../../lib/deps.ts";
import { gone } from "../../lib/errors.ts";
import { type ProviderProfile, SignInProblem } from "../../lib/oauth.ts";
import { type Atomic } from "../_atomic.ts";
import { markSeen } from "./dormant.ts";
import { verifyPasskeyUse } from "./passkeys.ts";
import { findIdentity, type Identity, putNewIdentity, touchIdentity } from "./identities.ts";
import { type LinkMail, newSignInMail, validity } from "../../mail/sign_in.ts";
import { atomic, transact } from "../_atomic.ts";
import {
  type Account,
  accountKey,
  findAccountByEmail,
  prepareAccount,
  putAccount,
} from "./accounts.ts";
import { findLink, type Link, LINK_LIFE, prepareLink } from "./links.ts";
import { deliver, enqueueMail } from "../alerts/outbox.ts";
import { prepareSession, type Session } from "./sessions.ts";
import { trailAppend } from "../store/trail.ts";

/** The page a mailed link opens, `{BASE_URL}/me?verify=<token>` (docs/api.md, "Web pages"). */
const linkUrl = (baseUrl: string, token: string) =>
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

interface SignedIn {
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
  /** The person confirmed their age on the link's page (web/_sign_in_link_page.tsx). */
  ageOk = false,
): Promise<SignedIn> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { result, mailIds } = await transact(async () => {
    const found = await findLink(kv, token, now);
    if (!found) gone("this link is used, expired or unknown: request a new one");
    const link = found.entry.value;
    const op = found.consume(atomic(kv));
    const existing = await findAccountByEmail(kv, link.email);
    const { account, mailIds } = await joinOrCreate(
      deps,
      op,
      existing,
      {
        email: link.email,
        name: link.name ?? "",
      },
      origin,
      now,
      ageOk || link.age_confirmed === true,
    );
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

export interface Origin {
  address: string;
  agent: string;
}

/**
 * The account a sign-in ends in: the existing one (checked unchanged in `op`; the new-device
 * notice mailed to it), or a new one for the address, created in `op` with its trail
 * line. Answers the account and the mails queued.
 */
async function joinOrCreate(
  deps: Deps,
  op: Atomic,
  existing: Deno.KvEntry<Account> | null,
  fresh: { email: string; name: string } | null,
  origin: Origin,
  now: number,
  /** The sign-in confirmed the person's age: recorded on an account that has none yet. */
  ageOk = false,
): Promise<{ account: Account; created: boolean; mailIds: string[] }> {
  if (existing) {
    op.check(existing);
    const account = ageOk && existing.value.age_confirmed === undefined
      ? { ...existing.value, age_confirmed: now }
      : existing.value;
    if (account !== existing.value) putAccount(op, account);
    const notice = newSignInMail(
      now,
      origin.address,
      origin.agent,
      `${deps.config.baseUrl}/me/devices`,
    );
    const id = enqueueMail(op, { ...notice, to: existing.value.email }, now);
    return { account, created: false, mailIds: [id] };
  }
  if (!fresh) throw new Error("joinOrCreate: no account and nothing to create one from");
  const made = await prepareAccount(deps.kv, fresh.email, fresh.name, now);
  if (ageOk) made.account.age_confirmed = now;
  made.apply(op);
  const account = made.account;
  const trail = await trailAppend(deps.kv, [{
    actor: `account:${account.id}`,
    action: "account.create",
    subject: `account:${account.id}`,
  }], now);
  trail.apply(op);
  return { account, created: true, mailIds: [] };
}

/** A sign-in through a provider or a passkey: the device session it opened. */
interface SignedInVia {
  account: Account;
  created: boolean;
  token: string;
  session: Session;
}

/**
 * Signs in the person a provider vouched for. A known identity signs in to its account. A new
 * one needs an address the provider verified: it joins the account of that address, or a new
 * account is made for it (named as the provider names the person, when that name fits). An
 * unverified address never joins or makes an account. One atomic: the identity's key is
 * checked, so one identity never ends in two accounts.
 */
export async function completeProviderSignIn(
  deps: Deps,
  provider: string,
  profile: ProviderProfile,
  origin: Origin,
): Promise<SignedInVia> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { result, mailIds } = await transact(async () => {
    const op = atomic(kv);
    const known = await findIdentity(kv, provider, profile.subject);
    let joined;
    if (known.value) {
      const account = await kv.get<Account>(accountKey(known.value.account));
      // Erasure unlinks an account's identities with it, so this is a race with an erasure.
      if (!account.value) throw new SignInProblem("refused");
      touchIdentity(op, known as Deno.KvEntry<Identity>, now);
      joined = await joinOrCreate(deps, op, account as Deno.KvEntry<Account>, null, origin, now);
    } else {
      if (!profile.email) throw new SignInProblem("unverified");
      const existing = await findAccountByEmail(kv, profile.email);
      if (!profile.emailVerified) throw new SignInProblem(existing ? "conflict" : "unverified");
      const name = profile.name.length >= 2 ? profile.name : "";
      joined = await joinOrCreate(deps, op, existing, { email: profile.email, name }, origin, now);
      putNewIdentity(op, identityOf(provider, profile, joined.account.id, now));
    }
    return { op, result: await openSession(kv, op, joined, provider, now) };
  });
  await deliver(deps, mailIds);
  await markSeen(kv, result.account.id, now);
  return result;
}

/**
 * Links the person a provider vouched for to a signed-in account: a new identity is added (the
 * provider's address need not be the account's); one that is the account's already is only
 * touched; one of another account is refused.
 */
export async function linkProvider(
  deps: Deps,
  account: number,
  provider: string,
  profile: ProviderProfile,
): Promise<void> {
  const { kv } = deps;
  const now = deps.clock.now();
  await transact(async () => {
    const op = atomic(kv);
    const known = await findIdentity(kv, provider, profile.subject);
    if (known.value && known.value.account !== account) throw new SignInProblem("taken");
    if (known.value) {
      touchIdentity(op, known as Deno.KvEntry<Identity>, now);
      return { op, result: undefined };
    }
    const owner = await kv.get<Account>(accountKey(account));
    if (!owner.value) throw new SignInProblem("refused");
    op.check(owner);
    putNewIdentity(op, identityOf(provider, profile, account, now));
    return { op, result: undefined };
  });
}

/**
 * Signs in with a passkey: its answer to `challenge` verified (kv/accounts/passkeys.ts), its use
 * recorded, a session opened for its account, the new-device notice mailed. A passkey sign-in
 * is a fresh sign-in like any other.
 */
export async function completePasskeySignIn(
  deps: Deps,
  challenge: string,
  credential: string,
  origin: Origin,
): Promise<SignedInVia> {
  const { kv } = deps;
  const now = deps.clock.now();
  const use = await verifyPasskeyUse(kv, deps.config, challenge, credential, now);
  const { result, mailIds } = await transact(async () => {
    const op = use.apply(atomic(kv));
    const account = await kv.get<Account>(accountKey(use.entry.value.account));
    if (!account.value) gone("the account of this passkey is gone");
    const joined = await joinOrCreate(
      deps,
      op,
      account as Deno.KvEntry<Account>,
      null,
      origin,
      now,
    );
    return { op, result: await openSession(kv, op, joined, "passkey", now) };
  }, 0);
  await deliver(deps, mailIds);
  await markSeen(kv, result.account.id, now);
  return result;
}

/** Opens the device session of a sign-in in `op`: what the sign-in answers, and its mails. */
async function openSession(
  kv: Deno.Kv,
  op: Atomic,
  joined: { account: Account; created: boolean; mailIds: string[] },
  method: string,
  now: number,
): Promise<{ result: SignedInVia; mailIds: string[] }> {
  const session = await prepareSession(kv, joined.account.id, now, method);
  session.apply(op);
  return {
    result: {
      account: joined.account,
      created: joined.created,
      token: session.token,
      session: session.session,
    },
    mailIds: joined.mailIds,
  };
}

/** The identity a provider's profile makes for `account`, first used now. */
function identityOf(
  provider: string,
  profile: ProviderProfile,
  account: number,
  now: number,
): Identity {
  return {
    provider,
    subject: profile.subject,
    account,
    email: profile.email,
    created: now,
    last_used: now,
  };
}
