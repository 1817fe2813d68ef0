import { sha256hex } from "../../lib/crypto.ts";
import { getManyEntries } from "../_batch.ts";
import { type Atomic, atomic, commit, deleteKeys } from "../_atomic.ts";

/**
 * Identities: a person at a sign-in provider (provider + the provider's subject id) and the
 * one account it signs in to. Key layout:
 *   ["identities", provider, subject_hash]                     -> Identity
 *   ["identities_by_account", account, provider, subject_hash] -> subject_hash
 * Both are written and deleted together. A new identity is written with a check that its key
 * is empty, so one identity never belongs to two accounts, whatever races. No provider token
 * is kept.
 */

export interface Identity {
  provider: string;
  /** The provider's id of the person (OpenID `sub`, GitHub's user id). */
  subject: string;
  account: number;
  /** The address the provider gave when the identity was linked (null: none). */
  email: string | null;
  created: number;
  last_used: number;
}

const subjectHash = (subject: string) => sha256hex(`subject:${subject}`).slice(0, 40);

const identityKey = (provider: string, hash: string) => ["identities", provider, hash] as const;
const byAccountKey = (account: number, provider: string, hash: string) =>
  ["identities_by_account", account, provider, hash] as const;

export async function findIdentity(
  kv: Deno.Kv,
  provider: string,
  subject: string,
): Promise<Deno.KvEntryMaybe<Identity>> {
  return await kv.get<Identity>(identityKey(provider, subjectHash(subject)));
}

/** Writes a new identity; the commit fails if the identity was linked meanwhile. */
export function putNewIdentity(op: Atomic, identity: Identity): Atomic {
  const hash = subjectHash(identity.subject);
  const key = identityKey(identity.provider, hash);
  return op.check({ key, versionstamp: null }).set(key, identity)
    .set(byAccountKey(identity.account, identity.provider, hash), hash);
}

/** Marks a sign-in with an identity read in `entry` (checked unchanged). */
export function touchIdentity(op: Atomic, entry: Deno.KvEntry<Identity>, now: number): Atomic {
  return op.check(entry).set(entry.key, { ...entry.value, last_used: now });
}

/** The identities of an account (with the hash that names one in a page's path), oldest first. */
export async function identitiesOf(
  kv: Deno.Kv,
  account: number,
): Promise<(Identity & { hash: string })[]> {
  const keys: Deno.KvKey[] = [];
  for await (const e of kv.list<string>({ prefix: ["identities_by_account", account] })) {
    keys.push(identityKey(e.key[2] as string, e.value));
  }
  const got = await getManyEntries<Identity>(kv, keys);
  return got.flatMap((g, i) =>
    g.value && g.value.account === account ? [{ ...g.value, hash: keys[i][2] as string }] : []
  ).sort((a, b) => a.created - b.created);
}

/** Unlinks one identity of an account (by provider and subject hash); false when none. */
export async function removeIdentity(
  kv: Deno.Kv,
  account: number,
  provider: string,
  hash: string,
): Promise<boolean> {
  const idx = await kv.get<string>(byAccountKey(account, provider, hash));
  if (idx.value === null) return false;
  const res = await commit(
    atomic(kv).check(idx).delete(idx.key).delete(identityKey(provider, hash)),
  );
  return res.ok;
}

/** Unlinks every identity of an account (erasure). */
export async function dropIdentities(kv: Deno.Kv, account: number): Promise<void> {
  async function* keys() {
    for await (const e of kv.list<string>({ prefix: ["identities_by_account", account] })) {
      yield e.key;
      yield identityKey(e.key[2] as string, e.value);
    }
  }
  await deleteKeys(kv, keys());
}
