/**
 * The settings of an account's status pages (several, as Kuma has: each with its slug, title,
 * services in groups in the owner's order, and followers), stored apart from kv/status/page.ts
 * (which reads services to show them) so that modules the services area imports
 * (kv/status/followers.ts) can read them without an import cycle. Key layout:
 *   ["status_pages", account_id, page_id] -> StatusPage {id, slug, enabled, title, services:
 *                                            [{id, note, group?}], link?, logo?}
 *   ["status_page_slugs", slug]            -> {account, page}: a page with an address of its own
 * Page 1 is the account's first page: its slug is "" and it lives at /status/<account slug>
 * (following the account's slug when the name changes), as the single page of before did
 * (GET|PUT /api/me/status-page). Every other page has a slug of its own, unique among pages and
 * not an account's slug when made; an account named later to a page's slug does not take the
 * address from the page (the page's index is read first).
 */
import { conflict, invalid, notFound } from "../../lib/errors.ts";
import { type Atomic, atomic, commit, transact } from "../_atomic.ts";
import { type Account, accountBySlug, getAccount } from "../accounts/accounts.ts";
import { formTokenEntry, spendFormToken, spent } from "../store/form_tokens.ts";

export interface StatusPage {
  /** 1: the account's first page, at the account's slug. */
  id: number;
  /** The page's own address (/status/<slug>); "" for page 1 (the account's slug). */
  slug: string;
  enabled: boolean;
  title: string;
  /**
   * The services shown, in the order shown; groups stand in the order of their first service.
   * `group`: the heading it stands under on this page; "" or absent: the service's own group.
   */
  services: { id: number; note: string; group?: string }[];
  /** A link to the owner's own site in the page's header ("" or absent: none). */
  link?: string;
  /** Show the owner's profile picture as the page's logo. */
  logo?: boolean;
}

export const MAX_PAGES = 10;
export const PAGE_SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$/;

const pageKey = (account: number, id: number) => ["status_pages", account, id] as const;
const slugKey = (slug: string) => ["status_page_slugs", slug] as const;
/** Where the single page of before was stored (the migration moves it to page 1). */
const oldKey = (account: number) => ["status_pages", account] as const;

/** The account's page `id` (default its first); null when there is none. */
export async function getStatusPage(
  kv: Deno.Kv,
  account: number,
  id = 1,
): Promise<StatusPage | null> {
  return (await kv.get<StatusPage>(pageKey(account, id))).value;
}

/** The account's pages, by id (the first page first). */
export async function listStatusPages(kv: Deno.Kv, account: number): Promise<StatusPage[]> {
  const out: StatusPage[] = [];
  for await (const e of kv.list<StatusPage>({ prefix: ["status_pages", account] })) {
    out.push(e.value);
  }
  return out;
}

/** The page's address: its own slug, or the account's for page 1. */
export const pageSlug = (page: Pick<StatusPage, "slug">, owner: Pick<Account, "slug">) =>
  page.slug || owner.slug;

/** The page's title as shown: its own, or the owner's name. */
export const pageTitle = (page: Pick<StatusPage, "title">, owner: Pick<Account, "name">) =>
  page.title || owner.name;

/**
 * The page at /status/<slug> with its owner, published or not: a page's own slug first, then an
 * account's first page. Null when there is none.
 */
export async function pageBySlug(
  kv: Deno.Kv,
  slug: string,
): Promise<{ owner: Account; page: StatusPage } | null> {
  const own = (await kv.get<{ account: number; page: number }>(slugKey(slug))).value;
  if (own) {
    const owner = (await getAccount(kv, own.account)).value;
    const page = owner ? await getStatusPage(kv, owner.id, own.page) : null;
    return owner && page ? { owner, page } : null;
  }
  const owner = await accountBySlug(kv, slug);
  const page = owner ? await getStatusPage(kv, owner.id, 1) : null;
  return owner && page ? { owner, page } : null;
}

/** A slug another page may take: the form's rule, free among pages and accounts. */
async function checkSlug(kv: Deno.Kv, slug: string, account: number, id: number) {
  if (!PAGE_SLUG_RE.test(slug)) {
    invalid(
      "slug: 1 to 60 lower-case letters, digits and hyphens, starting and ending with a " +
        "letter or digit",
      "slug",
    );
  }
  const held = (await kv.get<{ account: number; page: number }>(slugKey(slug))).value;
  const mine = held?.account === account && held.page === id;
  if ((held && !mine) || await accountBySlug(kv, slug)) {
    invalid(`slug: /status/${slug} is taken; choose another address`, "slug");
  }
}

/** The token of the form that makes a page, how long it counts, and the moment it was sent. */
export interface PageForm {
  token: string;
  life: number;
  now: number;
}

/**
 * The form's token entry; a conflict with `repeated` when the same form was sent before and
 * the page it made is still there (at its slug): a page deleted since may be made again.
 */
async function unrepeated(kv: Deno.Kv, account: number, slug: string, form: PageForm) {
  const [token, held] = await Promise.all([
    formTokenEntry(kv, account, form.token),
    kv.get<{ account: number; page: number }>(slugKey(slug)),
  ]);
  if (spent(token, form.now) && held.value?.account === account) {
    conflict("this form was sent before: the page was made once", { repeated: true });
  }
  return token;
}

/**
 * Stores page `page.id` as given (kv/status/page.ts `saveStatusPage` checks its services first):
 * a slug of its own indexed, a changed one moved, page 1 without one. A page that is not there
 * yet is made (at most MAX_PAGES). `form`: the token of the page's form (kv/store/form_tokens.ts),
 * spent in the page's atomic, so the same form sent again makes nothing (before the slug is
 * refused as taken: by the page that form made).
 */
export async function putStatusPage(
  kv: Deno.Kv,
  account: number,
  page: StatusPage,
  form?: PageForm,
) {
  if (page.id === 1 && page.slug) {
    invalid("slug: the first page lives at your account's address; it has no slug", "slug");
  }
  if (form) await unrepeated(kv, account, page.slug, form);
  if (page.id !== 1) await checkSlug(kv, page.slug, account, page.id);
  await transact(async () => {
    const [entry, token] = await Promise.all([
      kv.get<StatusPage>(pageKey(account, page.id)),
      form ? unrepeated(kv, account, page.slug, form) : null,
    ]);
    if (!entry.value && (await listStatusPages(kv, account)).length >= MAX_PAGES) {
      invalid(`at most ${MAX_PAGES} status pages an account`);
    }
    const op = atomic(kv).check(entry).set(pageKey(account, page.id), page);
    if (token) spendFormToken(op, token, form!.now, form!.life);
    const old = entry.value?.slug ?? "";
    if (old !== page.slug) {
      if (old) op.delete(slugKey(old));
      if (page.slug) {
        op.check({ key: slugKey(page.slug), versionstamp: null })
          .set(slugKey(page.slug), { account, page: page.id });
      }
    }
    return { op, result: page };
  });
}

/** A new page's id: one above the account's highest (page 1 is made only as the first page). */
export async function nextPageId(kv: Deno.Kv, account: number): Promise<number> {
  const pages = await listStatusPages(kv, account);
  return Math.max(1, ...pages.map((p) => p.id)) + 1;
}

/** Deletes page `id` and its slug's entry in `op`; not found when there is none. */
export async function dropStatusPageInto(
  kv: Deno.Kv,
  op: Atomic,
  account: number,
  id: number,
): Promise<StatusPage> {
  const entry = await kv.get<StatusPage>(pageKey(account, id));
  if (!entry.value) notFound("no such status page");
  op.check(entry).delete(entry.key);
  if (entry.value.slug) op.delete(slugKey(entry.value.slug));
  return entry.value;
}

/** Removes the account's status pages and their slugs (erasure). Badges go with their services. */
export async function eraseStatusPage(kv: Deno.Kv, account: number): Promise<void> {
  for (const page of await listStatusPages(kv, account)) {
    const op = atomic(kv).delete(pageKey(account, page.id));
    if (page.slug) op.delete(slugKey(page.slug));
    await commit(op);
  }
  await commit(atomic(kv).delete(oldKey(account)));
}

/**
 * The single page of before becomes the account's first page (a migration step): written as
 * page 1 and the old entry deleted in one atomic, so a step cut short and run again moves the
 * rest; a page 1 already there is kept.
 */
export async function movePagesToFirst(kv: Deno.Kv): Promise<number> {
  let moved = 0;
  for await (const e of kv.list<Omit<StatusPage, "id" | "slug">>({ prefix: ["status_pages"] })) {
    if (e.key.length !== 2) continue;
    const account = e.key[1] as number;
    const key = pageKey(account, 1);
    const page: StatusPage = { ...e.value, id: 1, slug: "" };
    const op = atomic(kv).check(e).delete(e.key);
    const there = await kv.get(key);
    if (!there.value) op.check(there).set(key, page);
    if ((await commit(op)).ok) moved++;
  }
  return moved;
}
