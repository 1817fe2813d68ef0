import { claimId } from "../store/ids.ts";
import { indexChange } from "../search/search_index.ts";
import { getManyValues } from "../_batch.ts";
import { iso } from "../../lib/clock.ts";
import { type Atomic } from "../_atomic.ts";

/**
 * Accounts. Key layout:
 *   ["accounts", id]              -> Account
 *   ["accounts_by_email", email]  -> id   (canonical address; unique)
 *   ["accounts_by_slug", slug]    -> id   (unique; only named accounts have a slug)
 * Indexes hold ids only, never copies of the account, and are written in the same atomic
 * as the account with `check(versionstamp: null)` when created.
 */

export const ROLES = ["contributor", "reviewer", "owner"] as const;
export type Role = typeof ROLES[number];
export type Standing = Role | "collector";

export interface Profile {
  org: string;
  role: string;
  about: string;
  bio: string;
  place: string;
  contact: string;
  website: string;
  langs: string[];
}

export interface AvatarRef {
  /** Content hash of the stored picture, used as ETag and cache buster. */
  etag: string;
  type: string;
  updated: number;
}

export interface Account {
  id: number;
  kind: "email";
  email: string;
  /** "" until the account is named. */
  name: string;
  /** "" until the account is named; then unique, for public profile paths. */
  slug: string;
  created: number;
  roles: Role[];
  profile: Profile;
  avatar: AvatarRef | null;
  /** Id of the latest application for contributor standing, null: none (kv/accounts/applications.ts). */
  application: number | null;
  /**
   * When the person confirmed being old enough for an account on the sign-in pages (the box on
   * the form, web/_sign_in_page.tsx, or on the link's page, web/_sign_in_link_page.tsx), so the
   * pages ask it once per account; absent until then. The API's `age_ok` is checked on every
   * login request and not stored.
   */
  age_confirmed?: number;
}

export const emptyProfile = (): Profile => ({
  org: "",
  role: "",
  about: "",
  bio: "",
  place: "",
  contact: "",
  website: "",
  langs: [],
});

/** The actor resource of docs/api.md "Resources, times and text" (http/schemas.ts ActorSchema). */
export function actorView(a: Account) {
  return {
    id: a.id,
    email: a.email,
    name: a.name,
    created: iso(a.created),
    roles: [...a.roles],
    standing: standingOf(a.roles),
  };
}

/** Where the account's picture is served, with its hash so caches see every change. */
export const avatarUrl = (a: Account) =>
  a.avatar ? `/api/avatars/${a.id}?v=${a.avatar.etag.slice(0, 12)}` : null;

/** The account resource of docs/api.md "Resources, times and text" (http/schemas.ts AccountSchema). */
export function accountView(a: Account) {
  return {
    ...actorView(a),
    kind: a.kind,
    slug: a.slug,
    profile: { ...a.profile, langs: [...a.profile.langs] },
    avatar: avatarUrl(a),
  };
}

export const accountKey = (id: number) => ["accounts", id] as const;
const emailKey = (email: string) => ["accounts_by_email", email] as const;
export const slugKey = (slug: string) => ["accounts_by_slug", slug] as const;

/**
 * The writers of the account keys, for other modules' atomics: this module is the one writer
 * of ["accounts"], ["accounts_by_email"] and ["accounts_by_slug"] (docs/kv.md).
 */
export function putAccount(op: Atomic, account: Account): Atomic {
  return op.set(accountKey(account.id), account);
}

/** Moves an account's slug from `old` to `slug` (which must still be free). */
export function moveSlug(op: Atomic, id: number, old: string, slug: string): Atomic {
  if (slug === old) return op;
  if (old) op.delete(slugKey(old));
  if (slug) op.check({ key: slugKey(slug), versionstamp: null }).set(slugKey(slug), id);
  return op;
}

/** Deletes an account with its address and slug entries (erasure). */
export function dropAccount(op: Atomic, account: Account): Atomic {
  op.delete(accountKey(account.id)).delete(emailKey(account.email));
  if (account.slug) op.delete(slugKey(account.slug));
  return op;
}

/** Highest role wins: owner, then reviewer, then contributor; none is "collector". */
export function standingOf(roles: readonly Role[]): Standing {
  for (const r of ["owner", "reviewer", "contributor"] as const) if (roles.includes(r)) return r;
  return "collector";
}

export const isTeam = (a: Account) => a.roles.includes("reviewer") || a.roles.includes("owner");
export const isOwner = (a: Account) => a.roles.includes("owner");

export async function getAccount(kv: Deno.Kv, id: number) {
  return await kv.get<Account>(accountKey(id));
}

/** The account holding a slug, or null. */
export async function accountBySlug(kv: Deno.Kv, slug: string): Promise<Account | null> {
  const id = (await kv.get<number>(slugKey(slug))).value;
  return id === null ? null : (await getAccount(kv, id)).value;
}

/** Every account, in id order (the team's listings, jobs and migrations walk them). */
export function eachAccount(
  kv: Deno.Kv,
  options?: Deno.KvListOptions,
): AsyncIterableIterator<Deno.KvEntry<Account>> {
  return kv.list<Account>({ prefix: ["accounts"] }, options);
}

/** The accounts of `ids` that exist, in that order. */
export async function getAccounts(kv: Deno.Kv, ids: number[]): Promise<Account[]> {
  return await getManyValues<Account>(kv, ids.map(accountKey));
}

export async function findAccountByEmail(
  kv: Deno.Kv,
  email: string,
): Promise<Deno.KvEntry<Account> | null> {
  const idx = await kv.get<number>(emailKey(email));
  if (idx.value === null) return null;
  const acc = await kv.get<Account>(accountKey(idx.value));
  return acc.value === null ? null : acc as Deno.KvEntry<Account>;
}

/**
 * What people search finds an account by (name, org, about); null for an unnamed account,
 * which is never searchable. Every write of an account updates the index from this.
 */
export function personText(a: Pick<Account, "name" | "profile">): string | null {
  return a.name ? `${a.name} ${a.profile.org} ${a.profile.about}` : null;
}

/** A URL-safe slug from a name: accents folded, lower-case, words joined by "-". */
export function slugify(name: string): string {
  const s = name.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60).replace(/-+$/, "");
  return s || "member";
}

/**
 * Finds a free slug for `name` (base, base-2, base-3, ...). The caller writes it with
 * `check(versionstamp: null)` on the slug key, so a race for the same slug fails the commit
 * and the caller's transaction retries with a fresh pick.
 */
export async function freeSlug(kv: Deno.Kv, name: string, ownId?: number): Promise<string> {
  const base = slugify(name);
  for (let n = 1;; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    const taken = await kv.get<number>(slugKey(slug));
    if (taken.value === null || taken.value === ownId) return slug;
  }
}

interface NewAccount {
  account: Account;
  apply(op: Atomic): Atomic;
}

/** Prepares a new account for an address with no account; the caller commits it. */
export async function prepareAccount(
  kv: Deno.Kv,
  email: string,
  name: string,
  now: number,
  roles: Role[] = [],
): Promise<NewAccount> {
  const claim = await claimId(kv, "account", accountKey);
  const slug = name ? await freeSlug(kv, name) : "";
  const account: Account = {
    id: claim.id,
    kind: "email",
    email,
    name,
    slug,
    created: now,
    roles,
    profile: emptyProfile(),
    avatar: null,
    application: null,
  };
  return {
    account,
    apply(op) {
      claim.apply(op)
        .check({ key: emailKey(email), versionstamp: null })
        .set(accountKey(account.id), account)
        .set(emailKey(email), account.id);
      if (slug) op.check({ key: slugKey(slug), versionstamp: null }).set(slugKey(slug), account.id);
      return indexChange(op, "person", account.id, null, personText(account));
    },
  };
}
