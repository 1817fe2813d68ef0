import { DAY, HOUR, MINUTE } from "../../lib/clock.ts";
import { randomToken, sha256hex } from "../../lib/crypto.ts";
import { type Atomic, atomic, commit } from "../_atomic.ts";

/**
 * Mailed links (sign-in, address confirmation, proposal confirmation, invitation).
 * Only the SHA-256 of a link token is stored. Key layout:
 *   ["links", token_hash]                          -> Link
 *   ["links_by_address", purpose, address_hash]    -> token_hash of the live link
 * A new link for the same address and purpose replaces the live one, in one atomic.
 */

type LinkPurpose = "login" | "address" | "proposal" | "invite";

export const LINK_LIFE: Record<LinkPurpose, number> = {
  login: 20 * MINUTE,
  address: HOUR,
  proposal: 7 * DAY,
  invite: 7 * DAY,
};

export interface Link {
  purpose: LinkPurpose;
  email: string;
  /** Names the account if the link creates one. */
  name?: string;
  created: number;
  expires: number;
  /** The invitation this link answers (purpose invite). */
  invite?: number;
  /** Asked for on the sign-in page with the age box ticked (web/_sign_in_page.tsx). */
  age_confirmed?: true;
}

const linkKey = (hash: string) => ["links", hash] as const;

export function addressHash(email: string): string {
  return sha256hex(`address:${email}`).slice(0, 40);
}

interface NewLink {
  token: string;
  link: Link;
  apply(op: Atomic): Atomic;
}

export async function prepareLink(
  kv: Deno.Kv,
  input: Omit<Link, "created" | "expires">,
  now: number,
): Promise<NewLink> {
  const token = randomToken(32);
  const hash = sha256hex(token);
  const link: Link = { ...input, created: now, expires: now + LINK_LIFE[input.purpose] };
  const idxKey = ["links_by_address", input.purpose, await addressHash(input.email)];
  const prev = await kv.get<string>(idxKey);
  const expireIn = LINK_LIFE[input.purpose] + HOUR;
  return {
    token,
    link,
    apply(op) {
      op.check(prev);
      if (prev.value) op.delete(linkKey(prev.value));
      return op.set(linkKey(hash), link, { expireIn }).set(idxKey, hash, { expireIn });
    },
  };
}

interface FoundLink {
  entry: Deno.KvEntry<Link>;
  hash: string;
  /** Deletes the link and its index (when it still points here). */
  consume(op: Atomic): Atomic;
}

/** A live link for a token, or null (unknown, used, replaced or expired). */
export async function findLink(kv: Deno.Kv, token: string, now: number): Promise<FoundLink | null> {
  if (token.length < 20 || token.length > 200) return null;
  const hash = sha256hex(token);
  const entry = await kv.get<Link>(linkKey(hash));
  if (entry.value === null) return null;
  if (entry.value.expires <= now) return null;
  const idxKey = ["links_by_address", entry.value.purpose, await addressHash(entry.value.email)];
  const idx = await kv.get<string>(idxKey);
  return {
    entry: entry as Deno.KvEntry<Link>,
    hash,
    consume(op) {
      op.check(entry).delete(linkKey(hash));
      if (idx.value === hash) op.check(idx).delete(idxKey);
      return op;
    },
  };
}

/** The live links to an address, one per purpose at most (data export). */
export async function linksTo(kv: Deno.Kv, email: string): Promise<Link[]> {
  const h = await addressHash(email);
  const out: Link[] = [];
  for (const purpose of Object.keys(LINK_LIFE)) {
    const idx = await kv.get<string>(["links_by_address", purpose, h]);
    if (!idx.value) continue;
    const link = await kv.get<Link>(linkKey(idx.value));
    if (link.value) out.push(link.value);
  }
  return out;
}

/** Removes every live link to an address (erasure). */
export async function dropLinksTo(kv: Deno.Kv, email: string): Promise<void> {
  const h = await addressHash(email);
  for (const purpose of Object.keys(LINK_LIFE)) {
    const idx = await kv.get<string>(["links_by_address", purpose, h]);
    if (idx.value) {
      await commit(atomic(kv).delete(idx.key).delete(linkKey(idx.value)));
    }
  }
}
