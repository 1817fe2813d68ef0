/**
 * Provider secrets at rest (alert channels' tokens, keys and webhook addresses): AES-256-GCM
 * with a key derived from SECRETS_KEY, each value bound to the record it belongs to (the
 * additional data names it, so a sealed value moved to another record does not open). The
 * key is never stored; KV alone does not give the secrets away.
 */
import { base64url } from "./crypto.ts";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** The AES-GCM key of a SECRETS_KEY (derived once per process). */
export function sealingKey(material: string): Promise<CryptoKey> {
  let key = keys.get(material);
  if (!key) {
    key = crypto.subtle.digest("SHA-256", encoder.encode(`channel secrets\0${material}`)).then(
      (raw) => crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]),
    );
    keys.set(material, key);
  }
  return key;
}

const fromBase64url = (s: string) =>
  Uint8Array.from(atob(s.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));

/** `v1.<iv>.<ciphertext>` of the text, bound to `bound` (the owning record's name). */
export async function sealSecret(key: CryptoKey, text: string, bound: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(bound) },
    key,
    encoder.encode(text),
  );
  return `v1.${base64url(iv)}.${base64url(new Uint8Array(data))}`;
}

/** The sealed text, or null when it does not open with this key for this record. */
export async function unsealSecret(
  key: CryptoKey,
  sealed: string,
  bound: string,
): Promise<string | null> {
  const [v, iv, data] = sealed.split(".");
  if (v !== "v1" || !iv || !data) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(iv), additionalData: encoder.encode(bound) },
      key,
      fromBase64url(data),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}
