/**
 * Passkeys' user handles (WebAuthn §14.6.1: random bytes, nothing personal), through a real
 * ceremony in process: a software authenticator (a P-256 key, "none" attestation, CBOR and
 * signatures as the specification lays them out) makes a passkey with the options the site
 * gives and signs in with it, answering the user handle it was made with. A passkey made
 * before handles were random answers `account:<id>` and still signs in.
 */
import assert from "node:assert/strict";
import {
  addPasskey,
  authenticationOptions,
  credentialHash,
  dropPasskeys,
  registrationOptions,
  verifyPasskeyUse,
} from "../kv/accounts/passkeys.ts";
import { base64url } from "../lib/crypto.ts";
import { dumpKv, type TestApp, testApp } from "./_helpers.ts";

const ORIGIN = "http://test.local";

/** CBOR (RFC 8949) for what an authenticator writes: integers, byte and text strings, maps. */
function cbor(v: unknown): Uint8Array {
  const head = (major: number, n: number) => {
    const m = major << 5;
    if (n < 24) return [m | n];
    if (n < 256) return [m | 24, n];
    if (n < 65536) return [m | 25, n >> 8, n & 255];
    return [m | 26, (n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255];
  };
  if (typeof v === "number") return new Uint8Array(v >= 0 ? head(0, v) : head(1, -1 - v));
  if (typeof v === "string") {
    const b = new TextEncoder().encode(v);
    return join(new Uint8Array(head(3, b.length)), b);
  }
  if (v instanceof Uint8Array) return join(new Uint8Array(head(2, v.length)), v);
  const pairs = v as [unknown, unknown][];
  return join(
    new Uint8Array(head(5, pairs.length)),
    ...pairs.flatMap(([k, x]) => [cbor(k), cbor(x)]),
  );
}

function join(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const sha256 = async (b: Uint8Array<ArrayBuffer>) =>
  new Uint8Array(await crypto.subtle.digest("SHA-256", b));
const utf8 = (s: string) => new TextEncoder().encode(s);
const fromB64url = (s: string) =>
  Uint8Array.from(atob(s.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));

/** The client data a browser signs over (WebAuthn §5.8.1), for this site's origin. */
const clientDataOf = (type: string, challenge: string) =>
  utf8(JSON.stringify({ type, challenge, origin: ORIGIN, crossOrigin: false }));

/** An ECDSA signature from WebCrypto's r || s into the DER form WebAuthn carries. */
function der(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.slice(i);
    const body = v[0] & 0x80 ? join(new Uint8Array([0]), v) : v;
    return join(new Uint8Array([2, body.length]), body);
  };
  const seq = join(int(raw.slice(0, 32)), int(raw.slice(32)));
  return join(new Uint8Array([0x30, seq.length]), seq);
}

/** One authenticator's passkey for this site: made from options, then used to sign in. */
async function softPasskey() {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const pub = new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey));
  const credId = crypto.getRandomValues(new Uint8Array(16));
  const rpHash = await sha256(utf8("test.local"));
  let counter = 0;
  let handle = "";
  const count = () => new Uint8Array([0, 0, 0, counter++]);
  return {
    id: base64url(credId),
    get handle() {
      return handle;
    },
    /** The browser's answer to registration options. */
    make(options: { challenge: string; user: { id: string } }): string {
      handle = options.user.id;
      const cose = cbor([[1, 2], [3, -7], [-1, 1], [-2, pub.slice(1, 33)], [-3, pub.slice(33)]]);
      const authData = join(
        rpHash,
        new Uint8Array([0x45]), // user present, user verified, attested credential data
        count(),
        new Uint8Array(16),
        new Uint8Array([0, credId.length]),
        credId,
        cose,
      );
      const clientData = clientDataOf("webauthn.create", options.challenge);
      return JSON.stringify({
        id: base64url(credId),
        rawId: base64url(credId),
        type: "public-key",
        response: {
          clientDataJSON: base64url(clientData),
          attestationObject: base64url(
            cbor([["fmt", "none"], ["attStmt", []], ["authData", authData]]),
          ),
          transports: ["internal"],
        },
        clientExtensionResults: {},
      });
    },
    /** The browser's answer to sign-in options, naming `userHandle` as the authenticator holds it. */
    async use(challenge: string, userHandle = handle): Promise<string> {
      const authData = join(rpHash, new Uint8Array([0x05]), count());
      const clientData = clientDataOf("webauthn.get", challenge);
      const signed = join(authData, await sha256(clientData));
      const sig = new Uint8Array(
        await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, signed),
      );
      return JSON.stringify({
        id: base64url(credId),
        rawId: base64url(credId),
        type: "public-key",
        response: {
          clientDataJSON: base64url(clientData),
          authenticatorData: base64url(authData),
          signature: base64url(der(sig)),
          userHandle,
        },
        clientExtensionResults: {},
      });
    },
  };
}

async function register(t: TestApp, account: Awaited<ReturnType<TestApp["account"]>>) {
  const key = await softPasskey();
  const options = await registrationOptions(t.kv, t.deps.config, account.account);
  const made = await addPasskey(
    t.kv,
    t.deps.config,
    account.account.id,
    options.challenge,
    key.make(options),
    "Laptop",
    t.clock.now(),
  );
  return { key, options, made };
}

async function signIn(t: TestApp, key: Awaited<ReturnType<typeof softPasskey>>, handle?: string) {
  const { challenge } = await authenticationOptions(t.deps.config);
  return await verifyPasskeyUse(
    t.kv,
    t.deps.config,
    challenge,
    await key.use(challenge, handle),
    t.clock.now(),
  );
}

Deno.test("passkeys: a new passkey's user handle is 64 random bytes, the account's own; it signs in", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const bob = await t.account("bob@example.org", { name: "Bob" });
  const first = await register(t, ada);
  const handle = fromB64url(first.options.user.id);
  assert.equal(handle.length, 64);
  assert.doesNotMatch(new TextDecoder().decode(handle), /account:/);
  assert.equal(first.made.user_handle, first.options.user.id);
  // The account keeps one handle for all its passkeys; another account has its own.
  const second = await register(t, ada);
  assert.equal(second.options.user.id, first.options.user.id);
  const other = await register(t, bob);
  assert.notEqual(other.options.user.id, first.options.user.id);
  // Signing in: the authenticator answers the handle it was made with.
  const used = await signIn(t, first.key);
  assert.equal(used.entry.value.account, ada.account.id);
  // Another account's handle on this passkey is refused.
  await assert.rejects(
    () => signIn(t, first.key, other.options.user.id),
    /this passkey belongs to another account/,
  );
  // Erasure takes the handle with the passkeys.
  await dropPasskeys(t.kv, ada.account.id);
  assert.doesNotMatch(await dumpKv(t.kv), new RegExp(`"passkey_handles",${ada.account.id}\\]`));
  assert.match(await dumpKv(t.kv), new RegExp(`"passkey_handles",${bob.account.id}\\]`));
});

Deno.test("passkeys: one made before handles were random answers account:<id> and still signs in", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const { key } = await register(t, ada);
  // As stored before: no user_handle; its authenticator holds `account:<id>`.
  const entryKey = ["passkeys", credentialHash(key.id)];
  const stored = await t.kv.get<Record<string, unknown>>(entryKey);
  const { user_handle: _gone, ...old } = stored.value!;
  await t.kv.set(entryKey, old);
  const legacy = base64url(utf8(`account:${ada.account.id}`));
  const used = await signIn(t, key, legacy);
  assert.equal(used.entry.value.account, ada.account.id);
  await assert.rejects(() => signIn(t, key, key.handle), /belongs to another account/);
});
