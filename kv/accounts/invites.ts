import { DAY, iso } from "../../lib/clock.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, invalid } from "../../lib/errors.ts";
import { inviteMail } from "../../mail/sign_in.ts";
import { type Account, findAccountByEmail } from "./accounts.ts";
import { issueLink } from "./sign_in.ts";
import { atomic, commit, transact } from "../_atomic.ts";
import { claimId } from "../store/ids.ts";
import { addressHash } from "./links.ts";
import { RULES, spendUse } from "../store/rate_limit.ts";
import { trailAppend } from "../store/trail.ts";
import { getManyValues } from "../_batch.ts";

/**
 * Invitations. Key layout:
 *   ["invites", id]                                -> Invite
 *   ["invites_by_inviter", account_id, id]         -> true
 *   ["invites_by_address", address_hash, id]       -> true   (kv/accounts/links.ts addressHash)
 * The link itself is a kv/accounts/links.ts link of purpose "invite" naming the invitation; opening
 * it creates the account and marks the invitation accepted (kv/parts/accounts.ts).
 */

const INVITE_LIFE = 7 * DAY;

export interface Invite {
  id: number;
  inviter: number;
  /** "" once the invited address's account was erased. */
  email: string;
  message: string;
  created: number;
  expires: number;
  /** The account the invitation created or signed in, once accepted (null again once erased). */
  account: number | null;
  accepted: number | null;
}

const inviteKey = (id: number) => ["invites", id] as const;
const byInviterKey = (account: number, id: number) => ["invites_by_inviter", account, id] as const;
const byAddressKey = (hash: string, id: number) => ["invites_by_address", hash, id] as const;

async function createInvite(
  kv: Deno.Kv,
  inviter: number,
  email: string,
  message: string,
  now: number,
): Promise<Invite> {
  const hash = await addressHash(email);
  return await transact(async () => {
    const claim = await claimId(kv, "invite", inviteKey);
    const invite: Invite = {
      id: claim.id,
      inviter,
      email,
      message,
      created: now,
      expires: now + INVITE_LIFE,
      account: null,
      accepted: null,
    };
    const trail = await trailAppend(kv, [{
      actor: `account:${inviter}`,
      action: "invite.create",
      subject: `invite:${invite.id}`,
    }], now);
    const op = claim.apply(atomic(kv))
      .set(inviteKey(invite.id), invite)
      .set(byInviterKey(inviter, invite.id), true)
      .set(byAddressKey(hash, invite.id), true);
    trail.apply(op);
    return { op, result: invite };
  });
}

async function getInvites(kv: Deno.Kv, ids: number[]): Promise<Invite[]> {
  return await getManyValues<Invite>(kv, ids.map(inviteKey));
}

/** Invitations an account sent, newest first. */
export async function invitesBy(kv: Deno.Kv, inviter: number): Promise<Invite[]> {
  const ids: number[] = [];
  for await (const e of kv.list({ prefix: ["invites_by_inviter", inviter] }, { reverse: true })) {
    ids.push(e.key[2] as number);
  }
  return await getInvites(kv, ids);
}

/** Invitations sent to an address, newest first (data export of the invited account). */
export async function invitesTo(kv: Deno.Kv, email: string): Promise<Invite[]> {
  const ids: number[] = [];
  const hash = await addressHash(email);
  for await (const e of kv.list({ prefix: ["invites_by_address", hash] }, { reverse: true })) {
    ids.push(e.key[2] as number);
  }
  return await getInvites(kv, ids);
}

/** Every invitation, newest first (team). */
export async function allInvites(kv: Deno.Kv): Promise<Invite[]> {
  const out: Invite[] = [];
  for await (const e of kv.list<Invite>({ prefix: ["invites"] }, { reverse: true })) {
    out.push(e.value);
  }
  return out;
}

/** Marks an invitation accepted by `account` (first acceptance wins); one trail line. */
export async function acceptInvite(
  kv: Deno.Kv,
  id: number,
  account: number,
  now: number,
): Promise<boolean> {
  return await transact(async () => {
    const entry = await kv.get<Invite>(inviteKey(id));
    if (!entry.value || entry.value.accepted !== null) return { op: null, result: false };
    const op = atomic(kv).check(entry)
      .set(inviteKey(id), { ...entry.value, account, accepted: now });
    (await trailAppend(kv, [{
      actor: `account:${account}`,
      action: "invite.accept",
      subject: `invite:${id}`,
    }], now)).apply(op);
    return { op, result: true };
  });
}

/**
 * Erasure: deletes the invitations the account sent, and takes its address, the message and
 * the account's id out of the invitations others sent to it (they stay in the inviter's list,
 * accepted or not).
 */
export async function eraseInvites(kv: Deno.Kv, account: number, email: string) {
  let n = 0;
  for (const inv of await invitesBy(kv, account)) {
    const op = atomic(kv).delete(inviteKey(inv.id)).delete(byInviterKey(account, inv.id));
    if (inv.email) op.delete(byAddressKey(await addressHash(inv.email), inv.id));
    await commit(op);
    n++;
  }
  const hash = await addressHash(email);
  for await (const e of kv.list({ prefix: ["invites_by_address", hash] })) {
    const id = e.key[2] as number;
    await transact(async () => {
      const entry = await kv.get<Invite>(inviteKey(id));
      const op = atomic(kv).check(entry).delete(e.key);
      if (entry.value) {
        op.set(inviteKey(id), { ...entry.value, email: "", message: "", account: null });
      }
      return { op, result: null };
    });
  }
  return n;
}

/** Invitations an account sent (for the team's counts). */
export async function countInvites(kv: Deno.Kv, inviter: number): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: ["invites_by_inviter", inviter] })) n++;
  return n;
}

/** An invitation as its inviter sees it (API answers and the data export). */
export const inviteView = (i: Invite) => ({
  id: i.id,
  email: i.email,
  message: i.message,
  created: iso(i.created),
  expires: iso(i.expires),
  accepted: i.accepted !== null,
  account: i.account,
});

/**
 * An account invites an address: it must have a name (the mail carries it), and the address
 * must be neither its own nor one with an account. Then the account's invite limit is counted
 * (`limited` past it), the invitation stored and the link mailed.
 */
export async function inviteAddress(
  deps: Deps,
  inviter: Account,
  input: { email: string; message: string },
): Promise<Invite> {
  const { email, message } = input;
  if (!inviter.name) invalid("name: set a name on your profile before inviting", "name");
  if (email === inviter.email) invalid("email: that is your own address", "email");
  if (await findAccountByEmail(deps.kv, email)) {
    conflict("email: this address already has an account", { field: "email" });
  }
  // Counted once the checks pass: a refused address does not use up the hour.
  await spendUse(deps.kv, RULES.invite, inviter.id, deps.clock.now());
  const invite = await createInvite(deps.kv, inviter.id, email, message, deps.clock.now());
  await issueLink(
    deps,
    { purpose: "invite", email, invite: invite.id },
    inviteMail(inviter.name, message),
  );
  return invite;
}
