import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

const encoder = new TextEncoder();

/**
 * URL-safe random secret of `bytes` bytes (docs/api.md, "Resources, times and text": no secret
 * of the service is shorter than 16).
 */
export function randomToken(bytes = 32): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return base64url(buf);
}

export function base64url(buf: Uint8Array): string {
  let s = "";
  for (const b of buf) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * SHA-256 as lower-case hex. Synchronous on purpose: WebCrypto's digest hops to a worker
 * thread and back, which cost more CPU than the rest of an authenticated request (every
 * bearer token, link and rate-limit key is hashed on the request path).
 */
export function sha256hex(input: string | Uint8Array): string {
  return bytesToHex(sha256(typeof input === "string" ? encoder.encode(input) : input));
}

export function hex(buf: Uint8Array): string {
  let s = "";
  for (const b of buf) s += b.toString(16).padStart(2, "0");
  return s;
}

/** Compares two strings without an early exit, so timing tells nothing about the secret. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** A value encrypted (AES-GCM) with a key only the holder of a secret can derive. */
export interface Sealed {
  iv: Uint8Array<ArrayBuffer>;
  data: Uint8Array<ArrayBuffer>;
}

/** The key of `secret` (256 random bits or more) for `purpose`, apart from its stored hash. */
function sealKey(purpose: string, secret: string): Promise<CryptoKey> {
  const raw = encoder.encode(`${purpose}\0${secret}`);
  return crypto.subtle.digest("SHA-256", raw).then((bytes) =>
    crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"])
  );
}

/** `value` (JSON) encrypted with the key of `secret`: what KV keeps holds no readable secret. */
export async function sealValue(purpose: string, secret: string, value: unknown): Promise<Sealed> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv },
      await sealKey(purpose, secret),
      encoder.encode(JSON.stringify(value)),
    ),
  );
  return { iv, data };
}

/** The value `sealValue` encrypted, or null when `secret` is not the one it was sealed with. */
export async function unsealValue<T>(
  purpose: string,
  secret: string,
  sealed: Sealed,
): Promise<T | null> {
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: sealed.iv },
      await sealKey(purpose, secret),
      sealed.data,
    );
    return JSON.parse(new TextDecoder().decode(plain)) as T;
  } catch {
    return null;
  }
}
