import { DAY, MINUTE } from "../../lib/clock.ts";
import { randomToken, sha256hex } from "../../lib/crypto.ts";
import { type Account, accountKey } from "./accounts.ts";
import { claimId } from "../store/ids.ts";
import { getManyEntries } from "../_batch.ts";
import { type Atomic, atomic, commit, deleteKeys } from "../_atomic.ts";

/**
 * Device sessions (bearer tokens). Only the SHA-256 of a token is stored. Key layout:
 *   ["sessions", token_hash]                   -> Session
 *   ["sessions_by_account", account_id, id]    -> token_hash
 * Both are written and deleted together; expiry is in the value (the KV expireIn only
 * cleans up afterwards).
 *
 * A token is `<account id>_<256 random bits, base64url>`: the id lets one KV read fetch the
 * session and its account together (each KV operation costs more CPU than the rest of a
 * request). The id is no secret; the whole token is hashed, so it cannot be swapped.
 */

const TOKEN_LIFE = 30 * DAY;
/** last_used is rewritten at most this often, so a request does not cost a KV write. */
const LAST_USED_GRANULARITY = MINUTE;

export interface Session {
  id: number;
  account: number;
  created: number;
  expires: number;
  last_used: number;
  /** How it was signed in: a provider's id or "passkey"; absent: a mailed link. */
  via?: string;
}

const sessionKey = (hash: string) => ["sessions", hash] as const;
const byAccountKey = (account: number, id: number) => ["sessions_by_account", account, id] as const;

interface NewSession {
  token: string;
  session: Session;
  apply(op: Atomic): Atomic;
}

export async function prepareSession(
  kv: Deno.Kv,
  account: number,
  now: number,
  via?: string,
): Promise<NewSession> {
  const claim = await claimId(kv, "session", (id) => byAccountKey(account, id));
  const token = `${account}_${randomToken(32)}`;
  const hash = sha256hex(token);
  const session: Session = {
    id: claim.id,
    account,
    created: now,
    expires: now + TOKEN_LIFE,
    last_used: now,
    ...(via ? { via } : {}),
  };
  // Clean-up a day after expiry; validity itself is decided by `expires`.
  const expireIn = TOKEN_LIFE + DAY;
  return {
    token,
    session,
    apply: (op) =>
      claim.apply(op)
        .set(sessionKey(hash), session, { expireIn })
        .set(byAccountKey(account, session.id), hash, { expireIn }),
  };
}

interface ActiveSession {
  session: Session;
  hash: string;
}

const TOKEN_FORM = /^([1-9]\d{0,15})_[A-Za-z0-9_-]{43}$/;

/**
 * The live session behind a bearer token and its account, read together from KV on every
 * request (one `getMany`): an ended session or a changed account counts at the next request,
 * whichever process wrote it. Null when the token is malformed, unknown, ended or expired, or
 * its account is gone.
 */
export async function findSession(
  kv: Deno.Kv,
  token: string,
  now: number,
): Promise<(ActiveSession & { account: Account }) | null> {
  const form = token.match(TOKEN_FORM);
  if (!form) return null;
  const hash = sha256hex(token);
  const [entry, acc] = await kv.getMany<[Session, Account]>([
    sessionKey(hash),
    accountKey(Number(form[1])),
  ]);
  const session = entry.value;
  const account = acc.value;
  if (!session || session.expires <= now || !account || session.account !== account.id) {
    return null;
  }
  if (now - session.last_used >= LAST_USED_GRANULARITY) {
    // Best effort: a lost race only means another request already moved last_used.
    const touched = { ...session, last_used: now };
    await commit(
      atomic(kv).check(entry).set(sessionKey(hash), touched, {
        expireIn: Math.max(session.expires - now + DAY, 1),
      }),
    );
    return { session: touched, hash, account };
  }
  return { session, hash, account };
}

export async function listSessions(kv: Deno.Kv, account: number): Promise<ActiveSession[]> {
  const hashes: string[] = [];
  for await (const e of kv.list<string>({ prefix: ["sessions_by_account", account] })) {
    hashes.push(e.value);
  }
  const out: ActiveSession[] = [];
  const got = await getManyEntries<Session>(kv, hashes.map(sessionKey));
  got.forEach((g, j) => g.value && out.push({ session: g.value, hash: hashes[j] }));
  return out;
}

/** Ends one session of an account; false when the account has no such session. */
export async function endSession(kv: Deno.Kv, account: number, id: number): Promise<boolean> {
  const idx = await kv.get<string>(byAccountKey(account, id));
  if (idx.value === null) return false;
  await commit(atomic(kv).delete(byAccountKey(account, id)).delete(sessionKey(idx.value)));
  return true;
}

/** Ends every session of an account; answers how many there were. */
export async function endAllSessions(kv: Deno.Kv, account: number): Promise<number> {
  let n = 0;
  // Each session with its index entry: two keys, so a chunk of deletes never parts them.
  async function* keys() {
    for await (const e of kv.list<string>({ prefix: ["sessions_by_account", account] })) {
      n++;
      yield e.key;
      yield sessionKey(e.value);
    }
  }
  await deleteKeys(kv, keys());
  return n;
}
