import { iso, MINUTE } from "../../lib/clock.ts";
import { sha256hex } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { conflict, limited } from "../../lib/errors.ts";
import { atomic, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { claimId } from "../store/ids.ts";
import { countUse, type Rule } from "../store/rate_limit.ts";

/**
 * API keys of the Healthchecks-compatible management API (api/hc.ts), per account: read-write
 * (`hcw_` + 28 letters and digits) and read-only (`hcr_` + 28), 32 characters as Healthchecks
 * issues them (some clients check the length). The key is shown once, when it is made; only
 * its SHA-256 is kept, and a request finds its key by that hash with one KV read (the lookup
 * compares no secret, so its time tells nothing about it). Key layout:
 *   ["api_keys", account_id, id]   -> ApiKey {id, account, name, readonly, created, hash}
 *   ["api_key_hashes", sha256(key)] -> {account, id, readonly}
 *   ["api_key_count", account_id]  -> KvU64, keys held (the MAX_API_KEYS limit)
 * The three change together in one atomic.
 */

export const MAX_API_KEYS = 10;
export const API_KEY_LENGTH = 32;

/** Calls to the management API per account: Healthchecks documents 100 a minute. */
const API_CALLS: Rule = { name: "hc_api", max: 100, windowMs: MINUTE };

export interface ApiKey {
  id: number;
  account: number;
  name: string;
  readonly: boolean;
  created: number;
  hash: string;
}

interface KeyHolder {
  account: number;
  id: number;
  readonly: boolean;
}

const keyKey = (account: number, id: number) => ["api_keys", account, id] as const;
const hashKey = (hash: string) => ["api_key_hashes", hash] as const;
const countKey = (account: number) => ["api_key_count", account] as const;

const ALPHANUMERIC = /^[A-Za-z0-9]+$/;

/** 28 random letters and digits after the prefix, as Healthchecks' `token_urlsafe(21)`. */
function newSecret(prefix: "hcw_" | "hcr_"): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  while (out.length < API_KEY_LENGTH - prefix.length) {
    // Rejection sampling keeps every character equally likely (62 of 256 byte values x4).
    for (const b of crypto.getRandomValues(new Uint8Array(32))) {
      if (b < 248 && out.length < API_KEY_LENGTH - prefix.length) out += alphabet[b % 62];
    }
  }
  return prefix + out;
}

/** What the owner sees of a key: never the key, never its hash. */
export const apiKeyView = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  readonly: k.readonly,
  created: iso(k.created),
  prefix: k.readonly ? "hcr_" : "hcw_",
});
type ApiKeyView = ReturnType<typeof apiKeyView>;

export async function listApiKeys(kv: Deno.Kv, account: number): Promise<ApiKey[]> {
  const out: ApiKey[] = [];
  for await (const e of kv.list<ApiKey>({ prefix: ["api_keys", account] })) out.push(e.value);
  return out;
}

/** Makes a key; answers it (shown once) and its view. 409 past MAX_API_KEYS. */
export async function createApiKey(
  deps: Deps,
  account: number,
  input: { name: string; readonly: boolean },
): Promise<{ key: string; item: ApiKeyView }> {
  const { kv } = deps;
  const key = newSecret(input.readonly ? "hcr_" : "hcw_");
  const hash = sha256hex(key);
  const now = deps.clock.now();
  const made = await transact(async () => {
    const count = await kv.get<Deno.KvU64>(countKey(account));
    if (Number(count.value?.value ?? 0n) >= MAX_API_KEYS) {
      conflict(`at most ${MAX_API_KEYS} API keys per account; revoke one first`, {
        max: MAX_API_KEYS,
      });
    }
    const id = await claimId(kv, "api_key", (id) => keyKey(account, id));
    const rec: ApiKey = { id: id.id, account, ...input, created: now, hash };
    const op = id.apply(atomic(kv)).check(count)
      .check({ key: hashKey(hash), versionstamp: null })
      .set(keyKey(account, rec.id), rec)
      .set(hashKey(hash), { account, id: rec.id, readonly: rec.readonly } satisfies KeyHolder)
      .sum(countKey(account), 1n);
    return { op, result: rec };
  });
  return { key, item: apiKeyView(made) };
}

/** Revokes a key at once; false: no such key of the account. */
export async function revokeApiKey(deps: Deps, account: number, id: number): Promise<boolean> {
  const { kv } = deps;
  return await transact(async () => {
    const [entry, count] = await kv.getMany<[ApiKey, Deno.KvU64]>([
      keyKey(account, id),
      countKey(account),
    ]);
    if (!entry.value) return { op: null, result: false };
    const left = Number(count.value?.value ?? 1n) - 1;
    const op = atomic(kv).check(entry).check(count)
      .delete(keyKey(account, id))
      .delete(hashKey(entry.value.hash));
    if (left > 0) op.set(countKey(account), new Deno.KvU64(BigInt(left)));
    else op.delete(countKey(account));
    return { op, result: true };
  });
}

/**
 * The holder of a key, found by its hash; null for anything that is not a live key. Keys of
 * the wrong form are refused without a lookup.
 */
export async function findApiKey(kv: Deno.Kv, key: string): Promise<KeyHolder | null> {
  if (key.length !== API_KEY_LENGTH || !/^hc[rw]_/.test(key) || !ALPHANUMERIC.test(key.slice(4))) {
    return null;
  }
  return (await kv.get<KeyHolder>(hashKey(sha256hex(key)))).value;
}

/** Counts one management API call of the account; past 100 a minute throws `limited` (429). */
export async function spendApiCall(kv: Deno.Kv, account: number, now: number): Promise<void> {
  const v = await countUse(kv, API_CALLS, account, now);
  if (!v.ok) {
    limited(
      `too many requests: at most ${API_CALLS.max} a minute; try again later`,
      v.retryAfter,
      { retry_after: v.retryAfter },
    );
  }
}

/** Removes every key of an account (erasure); answers how many. */
export async function eraseApiKeys(deps: Deps, account: number): Promise<number> {
  const keys = await listApiKeys(deps.kv, account);
  for (const k of keys) await revokeApiKey(deps, account, k.id);
  await deleteKeys(deps.kv, keysOf(deps.kv, { prefix: ["api_keys", account] }));
  return keys.length;
}
