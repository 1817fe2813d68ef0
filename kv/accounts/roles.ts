import { atomic, retryLocked, transact } from "../_atomic.ts";
import {
  type Account,
  eachAccount,
  findAccountByEmail,
  getAccount,
  prepareAccount,
  putAccount,
  type Role,
  ROLES,
} from "./accounts.ts";
import { closeOwnerClaim, openClaim } from "./owner_claim.ts";
import { forbidden } from "../../lib/errors.ts";
import { trailAppend } from "../store/trail.ts";

/**
 * Role changes by the owner's local command (cli/roles.ts), and the first owner by the link a
 * self-hosted server prints (kv/accounts/owner_claim.ts). Roles live on the account record
 * (kv/accounts/accounts.ts); no keys of their own. Each change commits the account and its one trail
 * line (actor "owner", or the account that used the link) together, with a check on the
 * account, so a change made meanwhile by the server (a rename, an approval) is re-read rather
 * than overwritten.
 */

export const isRole = (s: string): s is Role => (ROLES as readonly string[]).includes(s);

interface RoleChange {
  account: Account;
  /** False when the account already was as asked: nothing was written. */
  changed: boolean;
  /** True when the grant created the account. */
  created: boolean;
}

/** Gives a role; an address without an account gets one (unnamed, like a first sign-in). */
export async function grantRole(
  kv: Deno.Kv,
  email: string,
  role: Role,
  now: number,
): Promise<RoleChange> {
  return await transact<RoleChange>(async () => {
    const found = await findAccountByEmail(kv, email);
    const op = atomic(kv);
    let account: Account;
    let created = false;
    if (found) {
      if (found.value.roles.includes(role)) {
        return { op: null, result: { account: found.value, changed: false, created } };
      }
      account = { ...found.value, roles: sortRoles([...found.value.roles, role]) };
      putAccount(op.check(found), account);
    } else {
      const fresh = await prepareAccount(kv, email, "", now, [role]);
      fresh.apply(op);
      account = fresh.account;
      created = true;
    }
    const trail = await trailAppend(kv, [{
      actor: "owner",
      action: "role.grant",
      subject: `account:${account.id}`,
      fields: [role],
    }], now);
    trail.apply(op);
    // An owner named by the command needs no printed link any more.
    if (role === "owner") closeOwnerClaim(op);
    return { op, result: { account, changed: true, created } };
  });
}

/** Takes a role away; null when the address has no account. */
export async function revokeRole(
  kv: Deno.Kv,
  email: string,
  role: Role,
  now: number,
): Promise<RoleChange | null> {
  return await transact<RoleChange | null>(async () => {
    const found = await findAccountByEmail(kv, email);
    if (!found) return { op: null, result: null };
    if (!found.value.roles.includes(role)) {
      return { op: null, result: { account: found.value, changed: false, created: false } };
    }
    const account = { ...found.value, roles: found.value.roles.filter((r) => r !== role) };
    const op = putAccount(atomic(kv).check(found), account);
    const trail = await trailAppend(kv, [{
      actor: "owner",
      action: "role.revoke",
      subject: `account:${account.id}`,
      fields: [role],
    }], now);
    trail.apply(op);
    return { op, result: { account, changed: true, created: false } };
  });
}

/** Every account holding at least one role, by id. */
export async function listRoleHolders(kv: Deno.Kv): Promise<Account[]> {
  // The whole walk is retried: a locked file can interrupt a listing midway.
  return await retryLocked(async () => {
    const out: Account[] = [];
    for await (const e of eachAccount(kv, { batchSize: 500 })) {
      if (e.value.roles.length > 0) out.push(e.value);
    }
    return out;
  });
}

function sortRoles(roles: Role[]): Role[] {
  return ROLES.filter((r) => roles.includes(r));
}

/**
 * Makes the signed-in account the owner with the printed token, once: the account gains the
 * role, the claim is closed and the trail records it, in one atomic checked on both keys.
 */
export async function claimOwnership(
  kv: Deno.Kv,
  accountId: number,
  token: string,
  now: number,
): Promise<Account> {
  return await transact<Account>(async () => {
    const found = await getAccount(kv, accountId);
    if (found.value === null) forbidden("sign in first");
    const claim = await openClaim(kv, token, now);
    const roles = found.value.roles.includes("owner")
      ? found.value.roles
      : [...found.value.roles, "owner" as const];
    const account: Account = { ...found.value, roles };
    const op = closeOwnerClaim(putAccount(atomic(kv).check(claim, found), account));
    const trail = await trailAppend(kv, [{
      actor: `account:${accountId}`,
      action: "role.grant",
      subject: `account:${accountId}`,
      fields: ["owner"],
    }], now);
    trail.apply(op);
    return { op, result: account };
  });
}
