import { MINUTE } from "../../lib/clock.ts";
import { randomToken, type Sealed, sealValue, sha256hex, unsealValue } from "../../lib/crypto.ts";
import { atomic, commit } from "../_atomic.ts";

/**
 * Sign-in flows: what one browser's sign-in in progress must remember between two requests,
 * bound to that browser by a cookie holding 256 random bits (`flowCookie`). A provider
 * sign-in keeps its `state`, `nonce`, PKCE verifier, the page to come back to and, when a
 * signed-in person links a provider, the account; a passkey ceremony keeps its challenge.
 * Key layout:
 *   ["sign_in_flows", cookie_hash] -> {iv, data, expires}
 * The value is encrypted (AES-GCM) with a key derived from the cookie value, which KV never
 * holds: the KV alone gives no verifier or challenge away. A flow is used once: `takeFlow`
 * deletes it in an atomic checked on the entry it read, so two requests with the same cookie
 * (a callback replayed, a double submit) never both get it. Expiry is in the value; expireIn
 * cleans up.
 */

export const FLOW_LIFE = 10 * MINUTE;

export type Flow =
  | {
    kind: "provider";
    provider: string;
    state: string;
    nonce: string;
    verifier: string;
    next: string;
    /** Set when a signed-in account links the provider. */
    account?: number;
  }
  | {
    kind: "passkey";
    /** `register`: adding a passkey to `account`; `sign-in`: any passkey. */
    purpose: "register" | "sign-in";
    challenge: string;
    account?: number;
    next: string;
  };

interface StoredFlow extends Sealed {
  expires: number;
}

const flowKey = (cookie: string) => ["sign_in_flows", sha256hex(`flow:${cookie}`)] as const;

/** Keeps `flow` for FLOW_LIFE; answers the cookie value that finds it again. */
export async function startFlow(kv: Deno.Kv, flow: Flow, now: number): Promise<string> {
  const cookie = randomToken(32);
  const stored: StoredFlow = { ...await sealValue("flow", cookie, flow), expires: now + FLOW_LIFE };
  await commit(atomic(kv).set(flowKey(cookie), stored, { expireIn: FLOW_LIFE }));
  return cookie;
}

/**
 * The flow of this cookie, used up: null when there is none (never started, used already,
 * expired, or the cookie is not the one it was sealed for).
 */
export async function takeFlow(kv: Deno.Kv, cookie: string, now: number): Promise<Flow | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(cookie)) return null;
  const entry = await kv.get<StoredFlow>(flowKey(cookie));
  if (!entry.value) return null;
  const gone = await commit(atomic(kv).check(entry).delete(entry.key));
  // Another request took it first.
  if (!gone.ok) return null;
  if (entry.value.expires <= now) return null;
  return await unsealValue<Flow>("flow", cookie, entry.value);
}
