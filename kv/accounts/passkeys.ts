import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { Config } from "../../lib/config.ts";
import { base64url, sha256hex } from "../../lib/crypto.ts";
import { conflict, invalid } from "../../lib/errors.ts";
import { getManyEntries } from "../_batch.ts";
import { type Atomic, atomic, commit, deleteKeys, transact } from "../_atomic.ts";
import type { Account } from "./accounts.ts";

/**
 * Passkeys (WebAuthn credentials, through `@simplewebauthn/server`): added while signed in,
 * used to sign in from the sign-in page (discoverable credentials, so no address is typed).
 * Key layout:
 *   ["passkeys", credential_hash]                            -> Passkey
 *   ["passkeys_by_account", account_id, credential_hash]     -> credential_hash
 *   ["passkey_handles", account_id]                          -> Uint8Array (64 random bytes)
 * The handle is the account's WebAuthn user handle (§14.6.1: random, nothing personal), made
 * when its first passkey is offered and given to every passkey it adds after, so an
 * authenticator holds one passkey per account here. Passkeys made before handles were random
 * carry none and answer the handle `account:<id>`, which still signs them in.
 * Both are written and deleted together; a new passkey is written with a check that its key is
 * empty. The public key is kept (it verifies each sign-in), never a private one. Each sign-in's
 * signature counter must go up when the authenticator keeps one (a copied key shows as a counter
 * going back), and user verification is required.
 */

const MAX_PASSKEYS = 20;

export interface Passkey {
  /** The credential id (base64url), as the browser names it. */
  id: string;
  account: number;
  name: string;
  public_key: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
  /** "singleDevice" or "multiDevice" (synced); whether it is backed up now. */
  device_type: string;
  backed_up: boolean;
  created: number;
  last_used: number | null;
  /** The user handle it was made with (base64url); absent: `account:<id>` (older passkeys). */
  user_handle?: string;
}

export const credentialHash = (id: string) => sha256hex(`credential:${id}`).slice(0, 40);
const passkeyKey = (hash: string) => ["passkeys", hash] as const;
const byAccountKey = (account: number, hash: string) =>
  ["passkeys_by_account", account, hash] as const;

/**
 * The WebAuthn library, loaded when a passkey is first made or used: it brings a tree of
 * CommonJS certificate parsers that the first page of every server start would load otherwise
 * (docs/performance.md, "Start-up and the request path").
 */
const webauthn = () => import("@simplewebauthn/server");

/** The relying party: this site's host name and origin, from BASE_URL. */
function party(config: Config) {
  const url = new URL(config.baseUrl);
  return { rpID: url.hostname, origin: url.origin, rpName: "Community catalogue" };
}

const handleKey = (account: number) => ["passkey_handles", account] as const;

/** The user handle of the passkeys made before handles were random. */
const oldHandle = (account: number) => base64url(new TextEncoder().encode(`account:${account}`));

/** The account's user handle, made (64 random bytes) the first time it is asked for. */
async function userHandle(kv: Deno.Kv, account: number): Promise<Uint8Array<ArrayBuffer>> {
  return await transact(async () => {
    const held = await kv.get<Uint8Array<ArrayBuffer>>(handleKey(account));
    if (held.value) return { op: null, result: held.value };
    const made = crypto.getRandomValues(new Uint8Array(64));
    return { op: atomic(kv).check(held).set(handleKey(account), made), result: made };
  });
}

/** The passkeys of an account (with the hash that names one in a page's path), oldest first. */
export async function passkeysOf(
  kv: Deno.Kv,
  account: number,
): Promise<(Passkey & { hash: string })[]> {
  const hashes: string[] = [];
  for await (const e of kv.list<string>({ prefix: ["passkeys_by_account", account] })) {
    hashes.push(e.value);
  }
  const got = await getManyEntries<Passkey>(kv, hashes.map(passkeyKey));
  return got.flatMap((g, i) =>
    g.value && g.value.account === account ? [{ ...g.value, hash: hashes[i] }] : []
  ).sort((a, b) => a.created - b.created);
}

/** What the browser needs to make a passkey for `account`; keep its `challenge` for the answer. */
export async function registrationOptions(
  kv: Deno.Kv,
  config: Config,
  account: Account,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await passkeysOf(kv, account.id);
  if (existing.length >= MAX_PASSKEYS) {
    conflict(`an account holds at most ${MAX_PASSKEYS} passkeys; remove one first`);
  }
  const { rpID, rpName } = party(config);
  const { generateRegistrationOptions } = await webauthn();
  return await generateRegistrationOptions({
    rpName,
    rpID,
    userName: account.email,
    userID: await userHandle(kv, account.id),
    userDisplayName: account.name || account.email,
    attestationType: "none",
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
}

/** What the browser needs to sign in with any passkey of this site. */
export async function authenticationOptions(
  config: Config,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await webauthn();
  return await generateAuthenticationOptions({
    rpID: party(config).rpID,
    userVerification: "required",
  });
}

/** The browser's answer (JSON text from the page), or a refusal naming the field. */
function parseCredential<T>(text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = null;
  }
  const v = value as { id?: unknown; rawId?: unknown; response?: unknown; type?: unknown } | null;
  if (
    !v || typeof v.id !== "string" || v.id.length > 1400 || typeof v.rawId !== "string" ||
    typeof v.response !== "object" || v.type !== "public-key"
  ) {
    invalid("the browser's passkey answer is missing or damaged; try again", "credential");
  }
  return v as T;
}

/**
 * Checks the browser's new passkey against the `challenge` it was given and adds it to the
 * account under `name`.
 */
export async function addPasskey(
  kv: Deno.Kv,
  config: Config,
  account: number,
  challenge: string,
  credential: string,
  name: string,
  now: number,
): Promise<Passkey> {
  const response = parseCredential<RegistrationResponseJSON>(credential);
  const { rpID, origin } = party(config);
  const { verifyRegistrationResponse } = await webauthn();
  const checked = await verifyRegistrationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: origin,
    expectedRPID: rpID,
    requireUserVerification: true,
  }).catch(() => null);
  if (!checked?.verified) {
    invalid("the passkey could not be verified; try again", "credential");
  }
  const info = checked.registrationInfo;
  const passkey: Passkey = {
    id: info.credential.id,
    account,
    name,
    public_key: new Uint8Array(info.credential.publicKey),
    counter: info.credential.counter,
    transports: info.credential.transports ?? [],
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp,
    created: now,
    last_used: null,
    user_handle: base64url(await userHandle(kv, account)),
  };
  const hash = credentialHash(passkey.id);
  await transact(async () => {
    const held = await passkeysOf(kv, account);
    if (held.length >= MAX_PASSKEYS) {
      conflict(`an account holds at most ${MAX_PASSKEYS} passkeys; remove one first`);
    }
    // The count is a ceiling two adds at the same moment may pass by one; the passkey's own
    // key is checked empty, so one credential never lands twice.
    const op = atomic(kv)
      .check({ key: passkeyKey(hash), versionstamp: null })
      .set(passkeyKey(hash), passkey)
      .set(byAccountKey(account, hash), hash);
    return { op, result: undefined };
  });
  return passkey;
}

/** A sign-in's passkey, verified: the write that records its use goes in the caller's atomic. */
interface VerifiedUse {
  entry: Deno.KvEntry<Passkey>;
  apply(op: Atomic): Atomic;
}

/**
 * Checks a sign-in answer against the `challenge` this browser was given: a known passkey, its
 * user handle, the signature by its public key, user verification, the counter going up.
 */
export async function verifyPasskeyUse(
  kv: Deno.Kv,
  config: Config,
  challenge: string,
  credential: string,
  now: number,
): Promise<VerifiedUse> {
  const response = parseCredential<AuthenticationResponseJSON>(credential);
  const entry = await kv.get<Passkey>(passkeyKey(credentialHash(response.id)));
  const passkey = entry.value;
  if (!passkey) {
    invalid("this passkey is not known here (it may have been removed); use another way in");
  }
  const handle = response.response?.userHandle;
  if (handle && handle !== (passkey.user_handle ?? oldHandle(passkey.account))) {
    invalid("this passkey belongs to another account");
  }
  const { rpID, origin } = party(config);
  const { verifyAuthenticationResponse } = await webauthn();
  let checked;
  try {
    checked = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.id,
        publicKey: passkey.public_key,
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      requireUserVerification: true,
    });
  } catch (err) {
    const counter = err instanceof Error && /counter/i.test(err.message);
    invalid(
      counter
        ? "this passkey's signature counter went back, as a copied key's would; it was not accepted"
        : "the passkey's answer could not be verified; try again",
    );
  }
  if (!checked.verified) invalid("the passkey's answer could not be verified; try again");
  const used: Passkey = {
    ...passkey,
    counter: checked.authenticationInfo.newCounter,
    backed_up: checked.authenticationInfo.credentialBackedUp,
    last_used: now,
  };
  return {
    entry: entry as Deno.KvEntry<Passkey>,
    // Checked unchanged: an answer used twice at once signs in once.
    apply: (op) => op.check(entry).set(entry.key, used),
  };
}

/** Removes one passkey of an account; false when it has no such passkey. */
export async function removePasskey(kv: Deno.Kv, account: number, hash: string): Promise<boolean> {
  const idx = await kv.get<string>(byAccountKey(account, hash));
  if (idx.value === null) return false;
  const res = await commit(atomic(kv).check(idx).delete(idx.key).delete(passkeyKey(hash)));
  return res.ok;
}

/** Removes every passkey of an account (erasure). */
export async function dropPasskeys(kv: Deno.Kv, account: number): Promise<void> {
  async function* keys() {
    for await (const e of kv.list<string>({ prefix: ["passkeys_by_account", account] })) {
      yield e.key;
      yield passkeyKey(e.value);
    }
    yield handleKey(account);
  }
  await deleteKeys(kv, keys());
}
