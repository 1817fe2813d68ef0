import { DAY } from "../../lib/clock.ts";
import { constantTimeEqual, randomToken, sha256hex } from "../../lib/crypto.ts";
import { gone } from "../../lib/errors.ts";
import { type Atomic, atomic, commit } from "../_atomic.ts";

/**
 * The first owner of a self-hosted server. A new KV gets an open claim; the server prints a
 * link with its token at start, and the signed-in person who opens it becomes the owner (as
 * PocketBase's first admin), so nobody has to find `deno task roles` before the first page
 * that needs an owner. Only the token's SHA-256 is stored. Key layout:
 *   ["owner_claim"] -> OwnerClaim   (one key; absent once an owner exists)
 * It is read once at each start, never on a request path but the claim page's. The module
 * imports nothing of the accounts: a start loads only this (kv/accounts/roles.ts makes the owner).
 */

interface OwnerClaim {
  hash: string;
  expires: number;
}

/** How long a printed link can be used; a later start prints a new one while none was used. */
export const OWNER_CLAIM_LIFE = DAY;

const claimKey = ["owner_claim"] as const;

/**
 * A new token for the claim: on a new KV (`open` true), or while an earlier one is unused.
 * Each start replaces the token, so only the last printed link works. Null when the claim is
 * closed (an owner took it, or `deno task roles grant … owner` ran).
 */
export async function renewOwnerClaim(
  kv: Deno.Kv,
  open: boolean,
  now: number,
): Promise<string | null> {
  const current = await kv.get<OwnerClaim>(claimKey);
  if (!open && current.value === null) return null;
  const token = randomToken(32);
  const claim: OwnerClaim = { hash: sha256hex(token), expires: now + OWNER_CLAIM_LIFE };
  const done = await commit(atomic(kv).check(current).set(claimKey, claim));
  return done.ok ? token : null;
}

/** Closes the claim in the atomic that makes someone the owner by another way. */
export function closeOwnerClaim(op: Atomic): Atomic {
  return op.delete(claimKey);
}

/** Whether the token opens this claim now: not expired, and its hash. */
const opens = (claim: OwnerClaim, token: string, now: number) =>
  claim.expires > now && constantTimeEqual(claim.hash, sha256hex(token));

/** Whether the token opens the claim now, without using it (the confirmation page). */
export async function ownerClaimValid(kv: Deno.Kv, token: string, now: number): Promise<boolean> {
  const claim = (await kv.get<OwnerClaim>(claimKey)).value;
  return claim !== null && opens(claim, token, now);
}

/**
 * The open claim, checked against a token, for the atomic that makes its opener the owner
 * (kv/accounts/roles.ts `claimOwnership`): its entry, to check, or the reason it does not open.
 */
export async function openClaim(
  kv: Deno.Kv,
  token: string,
  now: number,
): Promise<Deno.KvEntryMaybe<OwnerClaim>> {
  const claim = await kv.get<OwnerClaim>(claimKey);
  if (claim.value === null) gone("this server already has an owner; the link is used up");
  if (!opens(claim.value, token, now)) {
    gone("this link is expired or was replaced by a newer one; restart the server for a new one");
  }
  return claim;
}
