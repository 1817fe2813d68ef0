import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64url, constantTimeEqual, randomToken } from "../../lib/crypto.ts";
import { atomic, commit } from "../_atomic.ts";

/**
 * An account's project badges, as Healthchecks has them (`GET /api/v3/badges/`): one badge per
 * tag and one for every check (`*`), each address signed so that one badge's address does not
 * give away the others'. Key layout:
 *   ["project_badge", account_id] -> {key, secret}: the badge key of the addresses and the
 *                                    secret their signatures are made with (never shown)
 *   ["project_badges", key]       -> account id
 * This module is their one writer. The key is kept as it is, as a service's badge token is
 * (kv/status/page.ts): it grants no more than the states the badges show, and the owner reads
 * it back in every badge address. Made on the first listing.
 */

interface BadgeRecord {
  key: string;
  secret: string;
}

const recordKey = (account: number) => ["project_badge", account] as const;
const byKey = (key: string) => ["project_badges", key] as const;

const PROJECT_BADGE_RE = /^[A-Za-z0-9_-]{22}$/;

/** The account's badge record, made (once, in an atomic) when it has none. */
export async function projectBadge(kv: Deno.Kv, account: number): Promise<BadgeRecord> {
  for (;;) {
    const got = await kv.get<BadgeRecord>(recordKey(account));
    if (got.value) return got.value;
    const made = { key: randomToken(16), secret: randomToken(32) };
    const op = atomic(kv).check(got).check({ key: byKey(made.key), versionstamp: null })
      .set(recordKey(account), made).set(byKey(made.key), account);
    if ((await commit(op)).ok) return made;
  }
}

/** The account of a badge key and its secret; null when none. */
export async function badgeOwner(
  kv: Deno.Kv,
  key: string,
): Promise<{ account: number; secret: string } | null> {
  if (!PROJECT_BADGE_RE.test(key)) return null;
  const account = (await kv.get<number>(byKey(key))).value;
  if (account === null) return null;
  const rec = (await kv.get<BadgeRecord>(recordKey(account))).value;
  return rec && rec.key === key ? { account, secret: rec.secret } : null;
}

/**
 * A tag's signature in its address: 8 characters of an HMAC of the tag under the account's
 * secret, then `-2` for the two-state badge (up or down) and nothing for the three-state one
 * (up, late, down), as Healthchecks writes them.
 */
export function badgeSignature(secret: string, tag: string, withLate: boolean): string {
  const mac = base64url(
    hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(tag)),
  );
  return mac.slice(0, 8) + (withLate ? "" : "-2");
}

/** Whether a signature is the tag's; answers whether late counts (three states). */
export function checkSignature(secret: string, tag: string, sig: string): boolean | null {
  const withLate = !(sig.length === 10 && sig.endsWith("-2"));
  return constantTimeEqual(sig, badgeSignature(secret, tag, withLate)) ? withLate : null;
}

/** Removes the account's badge key (erasure). */
export async function eraseProjectBadge(kv: Deno.Kv, account: number): Promise<void> {
  const got = await kv.get<BadgeRecord>(recordKey(account));
  if (!got.value) return;
  await commit(atomic(kv).delete(recordKey(account)).delete(byKey(got.value.key)));
}
