import { DAY, HOUR } from "../../lib/clock.ts";
import { randomToken, sha256hex } from "../../lib/crypto.ts";
import type { Deps } from "../../lib/deps.ts";
import { gone, notFound } from "../../lib/errors.ts";
import type { Mail } from "../../lib/mail.ts";
import {
  followConfirmMail,
  followGroupMail,
  followIncidentMail,
  followNoteMail,
  followServiceMail,
} from "../../mail/status.ts";
import { validity } from "../../mail/sign_in.ts";
import { type Atomic, atomic, commit, deleteKeys, keysOf, transact } from "../_atomic.ts";
import { type Account, getAccount } from "../accounts/accounts.ts";
import {
  getStatusPage,
  listStatusPages,
  pageBySlug,
  pageSlug,
  pageTitle,
  type StatusPage,
} from "./settings.ts";

/**
 * Followers of a status page: people without an account who get a mail when a service the
 * page lists goes off or comes back, at each update of an incident it shows and when the owner
 * posts a note (kv/status/notes.ts). An account has several pages (kv/status/settings.ts); a
 * follower follows one. Key layout:
 *   ["followers", account_id, address_hash] -> Follower (the address, kept only to mail it; its
 *                                              `page`, absent for page 1); the hash is of the
 *                                              page and the address
 *   ["follower_count", account_id]          -> KvU64, confirmed followers of page 1 (the owner
 *                                              sees it)
 *   ["follower_count", account_id, page_id] -> KvU64, the same of another page
 *   ["follow_tokens", account_id, token_hash] -> FollowToken: a confirmation link, or the
 *                                              unfollow link of one mail (its `page`)
 * A token reads "<account id>.<random>", so its record is found under the account and goes
 * with the account's erasure.
 * The mails go through the outbox (kv/alerts/outbox.ts): what the followers are to be told is
 * one delivery there, which it turns into one mail per follower with `followerBatch`; the
 * flows that mail or drop mail (a request, an unfollow, an erasure) are kv/status/follows.ts's.
 * A follow is confirmed through the mailed link (a page with a button: a scanner opening the
 * link confirms nothing); unconfirmed ones count for nothing and are gone after 7 days (the
 * value's `expires` decides, expireIn cleans up). Only hashes of tokens are stored, so every
 * mail carries an unfollow token of its own; a token outlives its follower harmlessly (it
 * holds no address). The address is in no log line and leaves with the unfollow.
 */

const PENDING_LIFE = 7 * DAY;
const UNFOLLOW_LIFE = 180 * DAY;
/** Followers mailed per atomic: a mail and a token each. */
const BATCH = 25;

interface Follower {
  email: string;
  created: number;
  /** When the link was confirmed; null while pending. */
  confirmed: number | null;
  /** A pending follow's end; null once confirmed. */
  expires: number | null;
  /** Hash of the pending follow's confirmation token. */
  confirm: string | null;
  /** The page followed; absent: page 1. */
  page?: number;
}

interface FollowToken {
  account: number;
  follower: string;
  purpose: "confirm" | "unfollow";
  expires: number;
  /** The page followed; absent: page 1. */
  page?: number;
}

/** What a page's followers are told: a service's alert, a group's, a note, an incident. */
export type FollowEvent =
  | { kind: "service"; service: number; name: string; state: "off" | "back" }
  | { kind: "note"; note: string; text: string }
  | {
    kind: "incident";
    incident: number;
    title: string;
    note: string;
    text: string;
    /** The services it affects: a page's followers hear of it when the page shows it. */
    services: number[];
  }
  | {
    kind: "group";
    label: string;
    services: { service: number; name: string; state: "off" | "back" }[];
  };

const followerKey = (account: number, address: string) => ["followers", account, address] as const;
const countKey = (account: number, page = 1): Deno.KvKey =>
  page === 1 ? ["follower_count", account] : ["follower_count", account, page];
const tokenKey = (account: number, hash: string) => ["follow_tokens", account, hash] as const;
const TOKEN_RE = /^([1-9][0-9]{0,15})\.[A-Za-z0-9_-]{20,100}$/;

/** A new token of the account: the string to mail and its record's key. */
function newToken(account: number) {
  const token = `${account}.${randomToken(32)}`;
  return { token, key: tokenKey(account, sha256hex(token)) };
}
const addressOf = (email: string, page: number) =>
  sha256hex(page === 1 ? `follow:${email}` : `follow:${page}:${email}`).slice(0, 40);

const pageUrl = (deps: Deps, slug: string) => `${deps.config.baseUrl}/status/${slug}`;
const confirmUrl = (deps: Deps, slug: string, token: string) =>
  `${pageUrl(deps, slug)}/confirm?token=${encodeURIComponent(token)}`;
export const unfollowUrl = (deps: Deps, slug: string, token: string) =>
  `${pageUrl(deps, slug)}/unfollow?token=${encodeURIComponent(token)}`;

const titleOf = pageTitle;

/** The published page of a slug, with its owner; not found otherwise. */
async function publishedPage(kv: Deno.Kv, slug: string) {
  const found = await pageBySlug(kv, slug);
  if (!found?.page.enabled) notFound("no such status page");
  return found;
}

/**
 * Stages a request to follow the page of `slug` in a new atomic: a pending follow and the
 * confirmation mail to add to it (kv/status/follows.ts `requestFollow` queues it and commits). Null
 * when the address follows already (it gets no mail). Run inside `transact`.
 */
export async function stageFollow(
  deps: Deps,
  slug: string,
  email: string,
): Promise<{ op: Atomic; mail: Mail } | null> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { owner, page } = await publishedPage(kv, slug);
  const address = addressOf(email, page.id);
  const entry = await kv.get<Follower>(followerKey(owner.id, address));
  const old = entry.value;
  if (old?.confirmed) return null;
  const { token, key } = newToken(owner.id);
  const follower: Follower = {
    email,
    created: now,
    confirmed: null,
    expires: now + PENDING_LIFE,
    confirm: key[2],
    ...(page.id === 1 ? {} : { page: page.id }),
  };
  const expireIn = PENDING_LIFE + HOUR;
  const op = atomic(kv).check(entry)
    .set(followerKey(owner.id, address), follower, { expireIn })
    .set(
      key,
      {
        account: owner.id,
        follower: address,
        purpose: "confirm",
        expires: now + PENDING_LIFE,
        ...(page.id === 1 ? {} : { page: page.id }),
      } satisfies FollowToken,
      { expireIn },
    );
  if (old?.confirm) op.delete(tokenKey(owner.id, old.confirm));
  const mail = followConfirmMail(
    titleOf(page, owner),
    confirmUrl(deps, pageSlug(page, owner), token),
    validity(PENDING_LIFE),
  );
  return { op, mail: { ...mail, to: email } };
}

/** A live token of `purpose` and the follow it names; null when used, expired or unknown. */
async function findToken(kv: Deno.Kv, token: string, purpose: FollowToken["purpose"], now: number) {
  const m = token.match(TOKEN_RE);
  if (!m) return null;
  const entry = await kv.get<FollowToken>(tokenKey(Number(m[1]), sha256hex(token)));
  const t = entry.value;
  if (!t || t.purpose !== purpose || t.expires <= now) return null;
  const follower = await kv.get<Follower>(followerKey(t.account, t.follower));
  return { entry, token: t, follower };
}

/** What a confirmation or unfollow link is about, for its page; null when it is not live. */
export async function followLink(
  deps: Deps,
  token: string,
  purpose: FollowToken["purpose"],
): Promise<{ title: string; slug: string } | null> {
  const found = await findToken(deps.kv, token, purpose, deps.clock.now());
  if (!found) return null;
  const owner = (await getAccount(deps.kv, found.token.account)).value;
  if (!owner) return null;
  const page = await getStatusPage(deps.kv, owner.id, found.token.page ?? 1);
  if (!page) return null;
  return { title: titleOf(page, owner), slug: pageSlug(page, owner) };
}

/** The address of a follow's page, for the answer of its link's button. */
async function slugOf(kv: Deno.Kv, account: number, page: number): Promise<string> {
  const owner = (await getAccount(kv, account)).value;
  const p = owner ? await getStatusPage(kv, account, page) : null;
  return owner && p ? pageSlug(p, owner) : owner?.slug ?? "";
}

/** Confirms a pending follow (the button of the mailed link); answers the page's slug. */
export async function confirmFollow(deps: Deps, token: string): Promise<{ slug: string }> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { account, page } = await transact(async () => {
    const found = await findToken(kv, token, "confirm", now);
    const f = found?.follower.value;
    if (
      !found || !f || f.confirm !== found.entry.key[2] || f.confirmed || (f.expires ?? 0) <= now
    ) {
      gone("this link is used, expired or unknown: follow the page again");
    }
    const confirmed: Follower = { ...f, confirmed: now, expires: null, confirm: null };
    const op = atomic(kv).check(found.entry, found.follower)
      .delete(found.entry.key)
      .set(found.follower.key, confirmed)
      .sum(countKey(found.token.account, found.token.page), 1n);
    return { op, result: { account: found.token.account, page: found.token.page ?? 1 } };
  });
  return { slug: await slugOf(kv, account, page) };
}

/**
 * Ends a follow through the unfollow link of a mail: the address is deleted. A link whose
 * follow ended already answers the same (the person is not following, as they asked).
 * Answers the page's slug, and the address and the mark of the page's mail still queued to
 * it, which kv/status/follows.ts drops (a relay down would otherwise keep the address in the outbox).
 */
export async function endFollow(
  deps: Deps,
  token: string,
): Promise<{ slug: string; queued: { email: string; mark: string } | null }> {
  const { kv } = deps;
  const now = deps.clock.now();
  const { account, page, email } = await transact(async () => {
    const found = await findToken(kv, token, "unfollow", now);
    if (!found) gone("this link is expired or unknown: use the link of a newer mail");
    const op = atomic(kv).check(found.follower);
    const f = found.follower.value;
    const page = found.token.page ?? 1;
    if (f) {
      op.delete(found.follower.key);
      if (f.confirmed) await lowerCount(kv, op, found.token.account, page);
    }
    return { op, result: { account: found.token.account, page, email: f?.email ?? null } };
  });
  const slug = await slugOf(kv, account, page);
  return {
    slug,
    queued: slug && email ? { email, mark: `${pageUrl(deps, slug)}/` } : null,
  };
}

/** Adds the count's decrement, checked, to `op`. */
async function lowerCount(kv: Deno.Kv, op: Atomic, account: number, page: number) {
  const count = await kv.get<Deno.KvU64>(countKey(account, page));
  const n = count.value?.value ?? 0n;
  op.check(count).set(countKey(account, page), new Deno.KvU64(n > 0n ? n - 1n : 0n));
}

/** How many follow the account's page `page` (confirmed): all the owner learns of them. */
export async function followerCount(kv: Deno.Kv, account: number, page = 1): Promise<number> {
  return Number((await kv.get<Deno.KvU64>(countKey(account, page))).value?.value ?? 0n);
}

/**
 * What followers are told of an event: a service's alert only when the page lists it; of a
 * group of several (kv/alerts/grouped_alerts.ts), the services the page lists, one of them
 * alone as its own alert. Null: nothing for the followers.
 */
function toldOf(e: FollowEvent, page: StatusPage): FollowEvent | null {
  const listed = (id: number) => page.services.some((s) => s.id === id);
  if (e.kind === "note") return e;
  // An incident shows on the pages that list a service it affects, or on all without any.
  if (e.kind === "incident") return !e.services?.length || e.services.some(listed) ? e : null;
  if (e.kind === "service") return listed(e.service) ? e : null;
  const shown = e.services.filter((s) => listed(s.service));
  if (shown.length > 1) return { ...e, services: shown };
  return shown.length ? { kind: "service", ...shown[0] } : null;
}

/** The mail one follower gets of an event (as `toldOf` says it) that happened `at`. */
function followerMail(
  deps: Deps,
  e: FollowEvent,
  at: number,
  title: string,
  slug: string,
  to: string,
  token: string,
): Mail {
  const page = pageUrl(deps, slug);
  const out = unfollowUrl(deps, slug, token);
  const text = e.kind === "service"
    ? followServiceMail(title, e.name, e.state, at, page, out)
    : e.kind === "group"
    ? followGroupMail(title, e.label, e.services, at, page, out)
    : e.kind === "incident"
    ? followIncidentMail(title, e.title, e.note, e.text, at, page, out)
    : followNoteMail(title, e.note, e.text, at, page, out);
  return { ...text, to };
}

/**
 * The next batch of a page's mail about `event` (BATCH followers after `cursor`): one mail per
 * confirmed follower, each with an unfollow token of its own added to `op`, and the cursor
 * after it. Null when nothing is left to mail: no follower after the cursor, the page not
 * published, or (a service's alert) the page does not list the service. The outbox adds the
 * mails and the cursor to `op`, checked against its record, so two processes never mail a
 * follower twice.
 */
export async function followerBatch(
  deps: Deps,
  op: Atomic,
  account: number,
  event: FollowEvent,
  at: number,
  cursor: string | null,
): Promise<{ mails: Mail[]; cursor: string } | null> {
  const { kv } = deps;
  const now = deps.clock.now();
  const owner = (await getAccount(kv, account)).value;
  // Each follower is told as its own page says: published, and showing the event.
  const told = new Map<number, { page: StatusPage; event: FollowEvent }>();
  for (const page of owner ? await listStatusPages(kv, account) : []) {
    const shown = page.enabled ? toldOf(event, page) : null;
    if (shown) told.set(page.id, { page, event: shown });
  }
  if (!owner || !told.size) return null;
  const start = cursor ? { start: [...followerKey(account, cursor), ""] as Deno.KvKey } : {};
  const batch: Deno.KvEntry<Follower>[] = [];
  const iter = kv.list<Follower>(
    { prefix: ["followers", account], ...start } as Deno.KvListSelector,
    { limit: BATCH },
  );
  for await (const f of iter) batch.push(f);
  if (!batch.length) return null;
  const mails: Mail[] = [];
  for (const f of batch) {
    const page = f.value.page ?? 1;
    const here = told.get(page);
    if (!f.value.confirmed || !here) continue;
    const { token, key } = newToken(account);
    op.set(
      key,
      {
        account,
        follower: f.key[2] as string,
        purpose: "unfollow",
        expires: now + UNFOLLOW_LIFE,
        ...(page === 1 ? {} : { page }),
      } satisfies FollowToken,
      { expireIn: UNFOLLOW_LIFE },
    );
    const slug = pageSlug(here.page, owner);
    mails.push(
      followerMail(deps, here.event, at, titleOf(here.page, owner), slug, f.value.email, token),
    );
  }
  return { mails, cursor: batch[batch.length - 1].key[2] as string };
}

/**
 * Deletes the account's followers, their count and their links (erasure of the owner, before
 * its slug goes); answers each address with the mark of the page's mail, for kv/status/follows.ts to
 * drop what is still queued to them: no address of theirs stays.
 */
export async function eraseFollowers(
  deps: Deps,
  owner: Account,
): Promise<{ email: string; mark: string }[]> {
  const { kv } = deps;
  const account = owner.id;
  const slugs = new Map(
    (await listStatusPages(kv, account)).map((p) => [p.id, pageSlug(p, owner)]),
  );
  const out: { email: string; mark: string }[] = [];
  for await (const e of kv.list<Follower>({ prefix: ["followers", account] })) {
    const slug = slugs.get(e.value.page ?? 1) ?? owner.slug;
    out.push({ email: e.value.email, mark: `${pageUrl(deps, slug)}/` });
    await commit(atomic(kv).delete(e.key));
  }
  await commit(atomic(kv).delete(countKey(account)));
  await deleteKeys(kv, keysOf(kv, { prefix: ["follower_count", account] }));
  await deleteKeys(kv, keysOf(kv, { prefix: ["follow_tokens", account] }));
  return out;
}

/**
 * Deletes the followers of one page that is deleted (its count too); answers each address
 * with the mark of the page's mail, for kv/status/follows.ts to drop what is still queued to them.
 * Their links then lead nowhere (a token holds no address).
 */
export async function erasePageFollowers(
  deps: Deps,
  account: number,
  page: number,
  slug: string,
): Promise<{ email: string; mark: string }[]> {
  const { kv } = deps;
  const out: { email: string; mark: string }[] = [];
  for await (const e of kv.list<Follower>({ prefix: ["followers", account] })) {
    if ((e.value.page ?? 1) !== page) continue;
    out.push({ email: e.value.email, mark: `${pageUrl(deps, slug)}/` });
    await commit(atomic(kv).delete(e.key));
  }
  await commit(atomic(kv).delete(countKey(account, page)));
  return out;
}
