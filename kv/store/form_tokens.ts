import { DAY } from "../../lib/clock.ts";
import { sha256hex } from "../../lib/crypto.ts";
import { type Atomic, deleteKeys, keysOf } from "../_atomic.ts";

/**
 * Form tokens: a form that makes something (a maintenance window) is recognised when the same
 * one is sent again (Back and submit, a double click), and makes nothing twice. The token names
 * the form and what it asks for (`formToken`: a hash of its fields, the moment of a "now" left
 * out), so a browser that loads the page afresh on Back (every signed-in page is no-store) sends
 * the same token with the same fields. Spending it is part of the atomic that writes what the
 * form makes; a second submit finds it spent until its life is over. Key layout:
 *   ["form_tokens", account, token_hash] -> until when it counts as spent (ms)
 * Only the SHA-256 of a token is kept, for its life (a day at most; expireIn cleans up).
 */

export const FORM_TOKEN_LIFE = DAY;

const tokenKey = (account: number, hash: string) => ["form_tokens", account, hash] as const;

/** The token of `form` asking for `fields` (JSON-like, its keys in a fixed order). */
export const formToken = (account: number, form: string, fields: unknown) =>
  sha256hex(`form:${form}:${account}:${JSON.stringify(fields)}`);

/** The token's entry: its value set once it was spent. */
export function formTokenEntry(kv: Deno.Kv, account: number, token: string) {
  return kv.get<number>(tokenKey(account, sha256hex(token)));
}

/** Whether the token read was spent and still counts (the same form was sent before). */
export const spent = (entry: Deno.KvEntryMaybe<number>, now: number) =>
  entry.value !== null && entry.value > now;

/** Spends the token for `life` ms in the caller's atomic (it fails if another submit did). */
export function spendFormToken(
  op: Atomic,
  entry: Deno.KvEntryMaybe<number>,
  now: number,
  life = FORM_TOKEN_LIFE,
): Atomic {
  const ms = Math.max(1000, Math.min(life, FORM_TOKEN_LIFE));
  return op.check(entry).set(entry.key, now + ms, { expireIn: ms });
}

/** Removes an account's spent tokens (erasure; they expire within a day anyway). */
export async function eraseFormTokens(kv: Deno.Kv, account: number): Promise<void> {
  await deleteKeys(kv, keysOf(kv, { prefix: ["form_tokens", account] }));
}
