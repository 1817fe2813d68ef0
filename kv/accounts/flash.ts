import { MINUTE } from "../../lib/clock.ts";
import { type Sealed, sealValue, sha256hex, unsealValue } from "../../lib/crypto.ts";
import { atomic, commit } from "../_atomic.ts";

/**
 * Flashes: what a form's answer must show once but cannot put in the address it sends the
 * browser to (Post/Redirect/Get): a new hook address, a channel's signing secret, the result of
 * a test. Kept for the page after the redirect, so a reload shows it again instead of sending
 * the form again, and gone after FLASH_LIFE. Key layout:
 *   ["flash", session_hash, name] -> {iv, data, expires}
 * Tied to the web session that posted the form (the SHA-256 of its token, as kv/accounts/sessions.ts
 * stores it). The value is encrypted (AES-GCM) with a key derived from the session's token,
 * which KV never holds: the KV alone does not give the secret away, and no other session can
 * read it. Expiry is in the value; expireIn cleans up.
 */

const FLASH_LIFE = 15 * MINUTE;

interface StoredFlash extends Sealed {
  expires: number;
}

const flashKey = (token: string, name: string) => ["flash", sha256hex(token), name] as const;

/** Keeps `value` (JSON) for the session holding `token`, under `name`, for FLASH_LIFE. */
export async function putFlash(
  kv: Deno.Kv,
  token: string,
  name: string,
  value: unknown,
  now: number,
): Promise<void> {
  // The key comes from the session's token (`flash` purpose), which KV never holds.
  const stored: StoredFlash = {
    ...await sealValue("flash", token, value),
    expires: now + FLASH_LIFE,
  };
  await commit(atomic(kv).set(flashKey(token, name), stored, { expireIn: FLASH_LIFE }));
}

/** The value kept under `name` for this session, or null (none, expired, another session's). */
export async function readFlash<T>(
  kv: Deno.Kv,
  token: string,
  name: string,
  now: number,
): Promise<T | null> {
  const found = (await kv.get<StoredFlash>(flashKey(token, name))).value;
  if (!found || found.expires <= now) return null;
  return await unsealValue<T>("flash", token, found);
}
