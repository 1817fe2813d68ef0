import { randomToken, sha256hex } from "../../lib/crypto.ts";
import { type Atomic, atomic, transact } from "../_atomic.ts";

/**
 * Ping keys: each account's one key to ping its heartbeats by slug, as a Healthchecks
 * project's ping key (`/ping/<ping key>/<slug>`). Only the key's hash is kept; the key is shown
 * once, when made. Key layout:
 *   ["ping_key", account_id] -> PingKey {hash, created}   the account's key
 *   ["ping_keys", hash]      -> account id                whose key it is (auto-provisioning)
 * The slugs' entries under a key (["hooks", slugHash(hash, slug)]) are kept by kv/service/commands.ts
 * in the atomic that changes the key or the service.
 */

export interface PingKey {
  hash: string;
  created: number;
}

/** Healthchecks' ping keys: 16 random bytes, base64url (22 characters). */
export const PING_KEY_RE = /^[A-Za-z0-9_-]{22}$/;

const ownKey = (account: number) => ["ping_key", account] as const;
const byHashKey = (hash: string) => ["ping_keys", hash] as const;

/** A new ping key and its hash. */
export function newPingKey(): { key: string; hash: string } {
  const key = randomToken(16);
  return { key, hash: sha256hex(key) };
}

/** The account's ping key entry (to check in an atomic that writes slug entries). */
export function pingKeyEntry(kv: Deno.Kv, account: number) {
  return kv.get<PingKey>(ownKey(account));
}

/** The account a ping key belongs to, or null. */
export async function accountOfPingKey(kv: Deno.Kv, hash: string): Promise<number | null> {
  return (await kv.get<number>(byHashKey(hash))).value;
}

/** The account's key becomes `hash` (the old one, if any, stops), in the caller's atomic. */
export function putPingKey(
  op: Atomic,
  account: number,
  hash: string,
  now: number,
  old: PingKey | null,
): Atomic {
  if (old) op.delete(byHashKey(old.hash));
  return op.set(ownKey(account), { hash, created: now } satisfies PingKey)
    .set(byHashKey(hash), account);
}

/** Removes the account's key (erasure), in the caller's atomic. */
function dropPingKey(op: Atomic, account: number, old: PingKey | null): Atomic {
  if (old) op.delete(byHashKey(old.hash));
  return op.delete(ownKey(account));
}

/** Removes the account's key (erasure; its slugs' entries went with the services). */
export async function erasePingKey(kv: Deno.Kv, account: number): Promise<void> {
  await transact(async () => {
    const pk = await pingKeyEntry(kv, account);
    if (!pk.value) return { op: null, result: null };
    return { op: dropPingKey(atomic(kv).check(pk), account, pk.value), result: null };
  });
}
