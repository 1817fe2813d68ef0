import { sha256hex } from "../../lib/crypto.ts";
import { invalid, tooLarge, unsupported } from "../../lib/errors.ts";
import {
  centreSquare,
  decodeImage,
  encodePng,
  type ImageKind,
  type Rgba,
} from "../../lib/image.ts";
import { type Atomic, atomic, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { type Account, type AvatarRef, getAccount, putAccount } from "../accounts/accounts.ts";

/**
 * Profile pictures, stored re-encoded at 256 x 256. Key layout:
 *   ["avatar_chunks", account_id, etag, n] -> Uint8Array (n from 0; each under 60 000 bytes)
 * The account's `avatar` ({etag, type, updated}) names the live picture; chunks of the
 * previous picture are deleted in the same atomic that writes the new one.
 */

const AVATAR_SIZE = 256;
/** Uploads above this answer 413 before anything is read past it. */
export const MAX_AVATAR_BYTES = 10 * 1024 * 1024;
/** Declared pictures above this many pixels are refused before decoding. */
export const MAX_AVATAR_PIXELS = 40_000_000;
const CHUNK = 60_000;

export type { ImageKind };

export interface Header {
  kind: ImageKind;
  width: number;
  height: number;
}

/**
 * The kind and declared size of an image from its first bytes only, so a picture that
 * claims a huge size is refused before a decoder allocates for it. null: not an image we take.
 */
export function readHeader(b: Uint8Array): Header | null {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (b.length >= 24 && PNG.every((x, i) => b[i] === x)) {
    // The first chunk must be IHDR (bytes 12..15), with width and height after it.
    if (String.fromCharCode(...b.subarray(12, 16)) !== "IHDR") return null;
    return { kind: "png", width: dv.getUint32(16), height: dv.getUint32(20) };
  }
  if (b.length >= 10 && /^GIF8[79]a$/.test(String.fromCharCode(...b.subarray(0, 6)))) {
    const screen = { width: dv.getUint16(6, true), height: dv.getUint16(8, true) };
    // The first frame may declare a size of its own, larger than the screen: take the larger.
    const frame = gifFirstFrame(b, dv);
    return {
      kind: "gif",
      width: Math.max(screen.width, frame?.width ?? 0),
      height: Math.max(screen.height, frame?.height ?? 0),
    };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    // Walk the segments to the first start-of-frame, which declares the size.
    let i = 2;
    while (i + 4 <= b.length) {
      if (b[i] !== 0xff) return null;
      const marker = b[i + 1];
      if (marker === 0xff) {
        i++;
        continue;
      }
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
        i += 2;
        continue;
      }
      if (marker === 0xd9 || marker === 0xda) return null;
      const len = dv.getUint16(i + 2);
      if (len < 2) return null;
      const sof = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
      if (sof) {
        if (i + 9 > b.length) return null;
        return { kind: "jpeg", height: dv.getUint16(i + 5), width: dv.getUint16(i + 7) };
      }
      i += 2 + len;
    }
    return null;
  }
  return null;
}

/** Size of a GIF's first image descriptor, walking past the colour table and extensions. */
function gifFirstFrame(b: Uint8Array, dv: DataView): { width: number; height: number } | null {
  let i = 13;
  if (b.length > 10 && b[10] & 0x80) i += 3 * 2 ** ((b[10] & 7) + 1);
  while (i < b.length) {
    if (b[i] === 0x2c) {
      if (i + 9 > b.length) return null;
      return { width: dv.getUint16(i + 5, true), height: dv.getUint16(i + 7, true) };
    }
    if (b[i] !== 0x21) return null;
    i += 2;
    while (i < b.length && b[i] !== 0) i += b[i] + 1;
    i++;
  }
  return null;
}

interface Prepared {
  bytes: Uint8Array;
  type: string;
}

/**
 * Checks, decodes, centre-crops and re-encodes an upload; 4xx for anything else. Every
 * picture comes out as PNG: the encoder needs no native code, so it runs on Deno Deploy.
 */
export async function prepareAvatar(bytes: Uint8Array): Promise<Prepared> {
  if (bytes.length === 0) invalid("body: send the image bytes");
  if (bytes.length > MAX_AVATAR_BYTES) tooLarge(`image over ${MAX_AVATAR_BYTES} bytes`);
  const head = readHeader(bytes);
  if (!head) unsupported("body: not a PNG, JPEG or GIF image");
  if (head.width < 1 || head.height < 1) invalid("body: the image declares no size");
  if (head.width * head.height > MAX_AVATAR_PIXELS) {
    tooLarge(`image over ${MAX_AVATAR_PIXELS} pixels (${head.width} x ${head.height})`);
  }
  let img: Rgba;
  try {
    img = await decodeImage(bytes, head.kind);
  } catch {
    invalid("body: the image could not be decoded (damaged or truncated)");
  }
  if (img.width < 1 || img.height < 1) invalid("body: the image has no pixels");
  if (img.width * img.height > MAX_AVATAR_PIXELS) tooLarge("image too large");
  return { bytes: await encodePng(centreSquare(img, AVATAR_SIZE)), type: "image/png" };
}

const chunkPrefix = (account: number, etag: string) => ["avatar_chunks", account, etag] as const;

/** Stores a prepared picture as the account's avatar, replacing the one before. */
export async function setAvatar(
  kv: Deno.Kv,
  accountId: number,
  pic: Prepared,
  now: number,
): Promise<Account | null> {
  const etag = sha256hex(pic.bytes).slice(0, 32);
  return await transact(async () => {
    const entry = await getAccount(kv, accountId);
    if (!entry.value) return { op: null, result: null };
    const op = atomic(kv).check(entry);
    const old = entry.value.avatar;
    if (old && old.etag !== etag) await deleteChunks(kv, op, accountId, old.etag);
    for (let i = 0, n = 0; i < pic.bytes.length; i += CHUNK, n++) {
      op.set([...chunkPrefix(accountId, etag), n], pic.bytes.slice(i, i + CHUNK));
    }
    const avatar: AvatarRef = { etag, type: pic.type, updated: now };
    const next: Account = { ...entry.value, avatar };
    putAccount(op, next);
    return { op, result: next };
  });
}

async function deleteChunks(kv: Deno.Kv, op: Atomic, id: number, etag: string) {
  for await (const e of kv.list({ prefix: chunkPrefix(id, etag) })) op.delete(e.key);
}

/** Removes the account's picture; false when it had none. */
export async function removeAvatar(kv: Deno.Kv, accountId: number): Promise<boolean> {
  return await transact(async () => {
    const entry = await getAccount(kv, accountId);
    const old = entry.value?.avatar;
    if (!entry.value || !old) return { op: null, result: false };
    const op = putAccount(atomic(kv).check(entry), { ...entry.value, avatar: null });
    await deleteChunks(kv, op, accountId, old.etag);
    return { op, result: true };
  });
}

/** Deletes every stored chunk of an account, live or stray (erasure). */
export async function dropAvatarChunks(kv: Deno.Kv, accountId: number): Promise<void> {
  await deleteKeys(kv, keysOf(kv, { prefix: ["avatar_chunks", accountId] }));
}

/** The bytes of the account's picture, or null when it has none. */
export async function readAvatar(
  kv: Deno.Kv,
  accountId: number,
): Promise<{ ref: AvatarRef; bytes: Uint8Array } | null> {
  const acc = await getAccount(kv, accountId);
  const ref = acc.value?.avatar;
  if (!ref) return null;
  const parts: Uint8Array[] = [];
  for await (const e of kv.list<Uint8Array>({ prefix: chunkPrefix(accountId, ref.etag) })) {
    parts.push(e.value);
  }
  if (parts.length === 0) return null;
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { ref, bytes };
}
